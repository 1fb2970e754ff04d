#include "url/url_rule.h"

#include <gtest/gtest.h>

namespace urlsieve {
namespace {

UrlTail Rewritten(std::string_view form, std::string path, std::string query = "") {
  Result<UrlRule> rule = UrlRule::Parse(form);
  EXPECT_TRUE(rule.ok()) << rule.status().ToString();
  UrlTail tail{std::move(path), std::move(query)};
  if (rule.ok()) rule->Rewrite(&tail);
  return tail;
}

std::string Joined(const UrlTail& tail) { return JoinTail("", tail); }

TEST(UrlRuleTest, EveryFormRoundTripsThroughItsText) {
  for (std::string_view form :
       {"drop-param sid", "drop-param sid on /list", "drop-param hb=master",
        "drop-param hb=master on /gitweb.cgi", "sort-params", "alias /mirror/ /",
        "index-file index.html", "ignore-case", "param-path /index.php title /wiki/",
        "skip-param action=edit", "skip-path /login"}) {
    Result<UrlRule> rule = UrlRule::Parse(form);
    ASSERT_TRUE(rule.ok()) << form << ": " << rule.status().ToString();
    EXPECT_EQ(rule->Form(), form);
  }
}

TEST(UrlRuleTest, BadFormsAreRefusedWithTheReason) {
  for (std::string_view form : {"", "rewrite-all", "drop-param", "drop-param a on list",
                                "alias /a/ /a/", "alias a b", "index-file a/b", "ignore-case x",
                                "skip-param action", "skip-path login", "param-path /a b"}) {
    Result<UrlRule> rule = UrlRule::Parse(form);
    EXPECT_FALSE(rule.ok()) << form;
    if (!rule.ok()) {
      EXPECT_NE(rule.status().message().find("URL rule"), std::string::npos);
    }
  }
}

TEST(UrlRuleTest, DropParamRemovesEveryValueAndKeepsTheSeparator) {
  EXPECT_EQ(Joined(Rewritten("drop-param sid", "/a", "x=1&sid=2&y=3&sid=4")), "/a?x=1&y=3");
  EXPECT_EQ(Joined(Rewritten("drop-param sid", "/a", "sid=2")), "/a");
  // gitweb separates parameters with ';'.
  EXPECT_EQ(Joined(Rewritten("drop-param hb", "/g.cgi", "p=r.git;a=tree;hb=HEAD")),
            "/g.cgi?p=r.git;a=tree");
  EXPECT_EQ(Joined(Rewritten("drop-param sid on /a", "/b", "sid=2")), "/b?sid=2");
  EXPECT_EQ(Joined(Rewritten("drop-param hb=master", "/a", "hb=master&x=1")), "/a?x=1");
  EXPECT_EQ(Joined(Rewritten("drop-param hb=master", "/a", "hb=dev&x=1")), "/a?hb=dev&x=1");
}

TEST(UrlRuleTest, PathRewritesGoTowardsOneNormalForm) {
  EXPECT_EQ(Joined(Rewritten("sort-params", "/a", "b=1&a=2")), "/a?a=2&b=1");
  EXPECT_EQ(Joined(Rewritten("alias /mirror/ /", "/mirror/docs/p.html")), "/docs/p.html");
  EXPECT_EQ(Joined(Rewritten("alias /mirror/ /", "/mirrored/p.html")), "/mirrored/p.html");
  EXPECT_EQ(Joined(Rewritten("index-file index.html", "/docs/index.html")), "/docs/");
  EXPECT_EQ(Joined(Rewritten("index-file index.html", "/docs/xindex.html")), "/docs/xindex.html");
  // Percent-escapes keep their upper-case hex digits (RFC 3986 §6.2.2.1).
  EXPECT_EQ(Joined(Rewritten("ignore-case", "/Docs/A%2FB")), "/docs/a%2Fb");
  EXPECT_EQ(Joined(Rewritten("param-path /index.php title /wiki/", "/index.php", "title=Main")),
            "/wiki/Main");
  EXPECT_EQ(Joined(Rewritten("param-path /index.php title /wiki/", "/index.php",
                             "title=Main&action=edit")),
            "/index.php?title=Main&action=edit");
}

TEST(UrlRuleTest, SkipRulesMatchAndNeverRewrite) {
  Result<UrlRule> skip = UrlRule::Parse("skip-param action=edit");
  ASSERT_TRUE(skip.ok());
  EXPECT_TRUE(skip->Matches({"/index.php", "title=A&action=edit"}));
  EXPECT_FALSE(skip->Matches({"/index.php", "title=A&action=history"}));
  UrlTail tail{"/index.php", "action=edit"};
  EXPECT_FALSE(skip->Rewrite(&tail));
  Result<UrlRule> path = UrlRule::Parse("skip-path /login");
  ASSERT_TRUE(path.ok());
  EXPECT_TRUE(path->Matches({"/login", "return=/a"}));
  EXPECT_FALSE(path->Matches({"/login/x", ""}));
}

TEST(UrlRuleTest, ADropOfSeveralNamesIsOneRuleWhateverTheirOrder) {
  Result<UrlRule> rule = UrlRule::Parse("drop-param utm_source,utm_campaign");
  ASSERT_TRUE(rule.ok());
  EXPECT_EQ(rule->Form(), "drop-param utm_campaign,utm_source");
  EXPECT_EQ(Joined(Rewritten("drop-param utm_source,utm_campaign", "/a",
                             "utm_source=x&id=3&utm_campaign=y")),
            "/a?id=3");
  EXPECT_FALSE(UrlRule::Parse("drop-param a,,b").ok());
  EXPECT_FALSE(UrlRule::Parse("drop-param a,b=1").ok());
  auto parsed = [](std::string_view form) { return *UrlRule::Parse(form); };
  EXPECT_TRUE(Subsumes(parsed("drop-param a,b"), parsed("drop-param b on /x")));
  EXPECT_TRUE(Subsumes(parsed("drop-param a"), parsed("drop-param a=1")));
  EXPECT_FALSE(Subsumes(parsed("drop-param a"), parsed("drop-param a,b")));
  EXPECT_FALSE(Subsumes(parsed("drop-param a on /x"), parsed("drop-param a")));
}

TEST(UrlRuleTest, ADropScopedToAPageKindLeavesTheOtherKindsAlone) {
  // gitweb: one script, the page kind in a=...
  Result<UrlRule> rule = UrlRule::Parse("drop-param h,s where a=search");
  ASSERT_TRUE(rule.ok()) << rule.status().ToString();
  EXPECT_EQ(rule->Form(), "drop-param h,s where a=search");
  EXPECT_EQ(Joined(Rewritten("drop-param h,s where a=search", "/g.cgi", "p=x;a=search;h=1;s=y")),
            "/g.cgi?p=x;a=search");
  EXPECT_EQ(Joined(Rewritten("drop-param h,s where a=search", "/g.cgi", "p=x;a=tree;h=1")),
            "/g.cgi?p=x;a=tree;h=1");
  EXPECT_FALSE(UrlRule::Parse("drop-param h where a").ok());
  EXPECT_TRUE(Subsumes(*UrlRule::Parse("drop-param h,s"), *rule));
  EXPECT_FALSE(Subsumes(*rule, *UrlRule::Parse("drop-param h,s")));
}

TEST(UrlRuleTest, ADropScopedToURLsWithoutAParameterLeavesTheOthersAlone) {
  // gitweb: the root tree (no f) is the same listing at every commit; a directory's is not.
  const std::string_view form = "drop-param h,hb where a=tree without pg,f";
  Result<UrlRule> rule = UrlRule::Parse(form);
  ASSERT_TRUE(rule.ok()) << rule.status().ToString();
  EXPECT_EQ(rule->Form(), "drop-param h,hb where a=tree without f,pg");
  EXPECT_EQ(Joined(Rewritten(form, "/g.cgi", "p=x;a=tree;h=1;hb=2")), "/g.cgi?p=x;a=tree");
  EXPECT_EQ(Joined(Rewritten(form, "/g.cgi", "p=x;a=tree;f=src;h=1;hb=2")),
            "/g.cgi?p=x;a=tree;f=src;h=1;hb=2");
  EXPECT_EQ(Joined(Rewritten(form, "/g.cgi", "p=x;a=tree;h=1;pg=2")), "/g.cgi?p=x;a=tree;h=1;pg=2");
  EXPECT_FALSE(rule->MayRewrite("/g.cgi", "p=x;a=tree;f=src;h=1"));
  EXPECT_TRUE(rule->MayRewrite("/g.cgi", "p=x;a=tree;h=1"));
  // Without `where` too; NAME=VALUE too.
  EXPECT_EQ(Joined(Rewritten("drop-param h without f", "/g", "h=1")), "/g");
  EXPECT_EQ(Joined(Rewritten("drop-param h without f", "/g", "f=a&h=1")), "/g?f=a&h=1");
  EXPECT_EQ(UrlRule::Parse("drop-param hb=master without f")->Form(),
            "drop-param hb=master without f");
  // A parameter both dropped and required absent, or an empty name: refused.
  EXPECT_FALSE(UrlRule::Parse("drop-param h,f without f").ok());
  EXPECT_FALSE(UrlRule::Parse("drop-param h without f,").ok());
  EXPECT_FALSE(UrlRule::Parse("drop-param h without").ok());
  // The rule without `without` covers every URL the scoped one does, not the other way.
  const UrlRule wide = *UrlRule::Parse("drop-param h,hb where a=tree");
  EXPECT_TRUE(Subsumes(wide, *rule));
  EXPECT_FALSE(Subsumes(*rule, wide));
  EXPECT_TRUE(Subsumes(*UrlRule::Parse("drop-param h,hb where a=tree without f"), *rule));
  EXPECT_FALSE(Subsumes(*rule, *UrlRule::Parse("drop-param h,hb where a=tree without f")));
}

TEST(UrlRuleTest, IdsAreStableAndDifferByOrigin) {
  Result<UrlRule> rule = UrlRule::Parse("drop-param sid");
  ASSERT_TRUE(rule.ok());
  EXPECT_EQ(RuleId("http://a", *rule), RuleId("http://a", *rule));
  EXPECT_NE(RuleId("http://a", *rule), RuleId("http://b", *rule));
  EXPECT_EQ(RuleId("http://a", *rule).size(), 9u);
  EXPECT_EQ(RuleId("http://a", *rule)[0], 'd');
}

}  // namespace
}  // namespace urlsieve

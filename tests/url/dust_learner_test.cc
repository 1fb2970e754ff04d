#include "url/dust_learner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace urlsieve {
namespace {

constexpr std::string_view kSite = "http://127.0.0.1:8080";

std::string Url(std::string_view tail) { return std::string(kSite) + std::string(tail); }
PageFingerprint Page(uint64_t id) { return {id, id * 0x9E3779B97F4A7C15ull, true}; }

LinkDecision DecideOne(DustLearner& learner, std::string_view tail) {
  Result<CanonicalUrl> url = UrlCanonicalizer().Canonicalize(Url(tail));
  EXPECT_TRUE(url.ok());
  std::vector<LinkDecision> decisions;
  learner.Decide(std::span<const CanonicalUrl>(&*url, 1), &decisions);
  EXPECT_LE(decisions.size(), 1u);
  return decisions.empty() ? LinkDecision{} : decisions[0];
}

// A copy: Records() returns a new vector each time.
std::optional<RuleRecord> Find(const std::vector<RuleRecord>& records, std::string_view form) {
  auto it = std::find_if(records.begin(), records.end(),
                         [&](const RuleRecord& r) { return r.rule.Form() == form; });
  return it == records.end() ? std::nullopt : std::optional<RuleRecord>(*it);
}

// The rules of most tests here have five pairs of evidence: no lower bound on their confidence
// (the bound is tested on its own, below).
DustOptions Lenient() {
  DustOptions options;
  options.min_confidence_bound = 0;
  return options;
}

// Pages /p{i}.html, each also fetched as /p{i}.html?sid=1 (a copy of it).
void SessionPairs(DustLearner& learner, int from, int to) {
  for (int i = from; i < to; ++i) {
    const std::string page = Url("/p" + std::to_string(i) + ".html");
    learner.Observe(page, Page(i), false, "");
    learner.Observe(page + "?sid=1", Page(i), false, page);
  }
}

// Fetches the checks a validating rule asks for, as copies of their pages.
void PassChecks(DustLearner& learner, int pages) {
  for (int i = 0; i < pages; ++i) {
    const std::string tail = "/p" + std::to_string(i) + ".html?sid=7";
    if (DecideOne(learner, tail).kind == LinkDecision::Kind::kCheck) {
      EXPECT_FALSE(learner.Observe(Url(tail), Page(i), false, "").empty());
    }
  }
}

TEST(DustLearnerTest, ASessionParameterIsLearnedValidatedThenApplied) {
  DustOptions options = Lenient();
  options.check_every = 0;  // no checks of active rules here (below)
  DustLearner learner(options);
  SessionPairs(learner, 0, 4);
  // Four pairs are below the support of five: nothing is suppressed or checked yet.
  EXPECT_EQ(DecideOne(learner, "/p1.html?sid=7").kind, LinkDecision::Kind::kKeep);
  SessionPairs(learner, 4, 5);
  std::optional<RuleRecord> rule = Find(learner.Records(), "drop-param sid");
  ASSERT_TRUE(rule);
  EXPECT_EQ(rule->state, RuleState::kValidating);
  EXPECT_EQ(rule->support, 5u);
  // A check is compared with the page of its rule key whenever that one is fetched.
  ASSERT_EQ(DecideOne(learner, "/p9.html?sid=7").kind, LinkDecision::Kind::kCheck);
  learner.Observe(Url("/p9.html?sid=7"), Page(9), false, "");
  learner.Observe(Url("/p9.html"), Page(9), false, "");
  PassChecks(learner, 5);
  rule = Find(learner.Records(), "drop-param sid");
  ASSERT_TRUE(rule);
  EXPECT_EQ(rule->state, RuleState::kActive);
  EXPECT_EQ(learner.counters().validation_fetches, 3u);
  EXPECT_EQ(rule->validated, 3u);

  const LinkDecision decision = DecideOne(learner, "/p4.html?x=1&sid=9");
  EXPECT_EQ(decision.kind, LinkDecision::Kind::kRewrite);
  EXPECT_EQ(decision.rule_key, Url("/p4.html?x=1"));
  EXPECT_EQ(decision.rule_id, rule->id);
  // Another origin has no rules.
  std::vector<LinkDecision> other;
  Result<CanonicalUrl> elsewhere =
      UrlCanonicalizer().Canonicalize("http://127.0.0.2/p4.html?sid=9");
  ASSERT_TRUE(elsewhere.ok());
  learner.Decide(std::span<const CanonicalUrl>(&*elsewhere, 1), &other);
  EXPECT_TRUE(other.empty());
}

TEST(DustLearnerTest, ACounterExampleKeepsTheConfidenceBelowTheThreshold) {
  DustLearner learner(Lenient());
  SessionPairs(learner, 0, 1);
  // /q?sid=1 and /q?sid=2 are different pages: sid selects content there.
  learner.Observe(Url("/q?sid=1"), Page(100), false, "");
  learner.Observe(Url("/q?sid=2"), Page(200), false, "");
  SessionPairs(learner, 1, 6);
  std::vector<RuleRecord> records = learner.Records();
  EXPECT_FALSE(Find(records, "drop-param sid"));  // still a plain candidate
  // The value-specific rule (sid=1 selects nothing) has no counter-example.
  std::optional<RuleRecord> value = Find(records, "drop-param sid=1");
  ASSERT_TRUE(value);
  EXPECT_EQ(value->state, RuleState::kValidating);
}

TEST(DustLearnerTest, AContradictedRuleIsRetiredAndItsSuppressedUrlsComeBack) {
  DustLearner learner(Lenient());
  SessionPairs(learner, 0, 5);
  PassChecks(learner, 5);
  const LinkDecision decision = DecideOne(learner, "/p4.html?sid=9");
  ASSERT_EQ(decision.kind, LinkDecision::Kind::kRewrite);
  learner.Suppressed({decision.rule_id, Url("/p4.html?sid=9"), 2, Url("/")});
  EXPECT_EQ(learner.TakeNewSuppressed().size(), 1u);
  EXPECT_TRUE(learner.TakeRequeue().empty());
  // A later fetch finds /p1.html?sid=5 a different page from /p1.html.
  learner.Observe(Url("/p1.html?sid=5"), Page(999), false, "");
  std::optional<RuleRecord> rule = Find(learner.Records(), "drop-param sid");
  ASSERT_TRUE(rule);
  EXPECT_EQ(rule->state, RuleState::kRetired);
  const std::vector<SuppressedUrl> requeue = learner.TakeRequeue();
  ASSERT_EQ(requeue.size(), 1u);
  EXPECT_EQ(requeue[0].url, Url("/p4.html?sid=9"));
  EXPECT_EQ(requeue[0].depth, 2u);
  EXPECT_EQ(learner.TakeRetiredIds(), std::vector<std::string>{rule->id});
  EXPECT_EQ(learner.counters().requeued, 1u);
  EXPECT_EQ(DecideOne(learner, "/p4.html?sid=9").kind, LinkDecision::Kind::kKeep);
}

TEST(DustLearnerTest, AUrlAdmittedUnderItsRuleKeyAndLinkedAgainIsNoSuppressedCopy) {
  DustLearner learner(Lenient());
  SessionPairs(learner, 0, 5);
  PassChecks(learner, 5);
  // /p20.html?sid=9 is the first spelling of its key: queued, it is that key's page.
  const LinkDecision first = DecideOne(learner, "/p20.html?sid=9");
  ASSERT_EQ(first.kind, LinkDecision::Kind::kRewrite);
  learner.Admitted(first.rule_id, Url("/p20.html?sid=9"));
  // Linked again by the next page: seen, not a copy the rule keeps the crawl from fetching.
  EXPECT_FALSE(learner.Suppressed({first.rule_id, Url("/p20.html?sid=9"), 2, Url("/")}));
  EXPECT_TRUE(learner.Suppressed({first.rule_id, Url("/p20.html?sid=8"), 2, Url("/")}));
  EXPECT_EQ(learner.counters().suppressed, 1u);
  // Retired, the rule gives back the copy only: the page itself was fetched.
  learner.Observe(Url("/p1.html?sid=5"), Page(999), false, "");
  const std::vector<SuppressedUrl> requeue = learner.TakeRequeue();
  ASSERT_EQ(requeue.size(), 1u);
  EXPECT_EQ(requeue[0].url, Url("/p20.html?sid=8"));
}

TEST(DustLearnerTest, AnActiveRuleIsCheckedEarlyAndRetiredByItsFirstFailedCheck) {
  DustOptions options = Lenient();
  options.validation_sample = 0;  // active as soon as it has the support
  DustLearner learner(options);
  SessionPairs(learner, 0, 40);
  std::optional<RuleRecord> rule = Find(learner.Records(), "drop-param sid");
  ASSERT_TRUE(rule);
  ASSERT_EQ(rule->state, RuleState::kActive);
  // The 4th URL it covers is fetched as a check (then the 16th, then every check_every-th).
  for (int i = 1; i <= 3; ++i) {
    EXPECT_EQ(DecideOne(learner, "/p" + std::to_string(i) + ".html?sid=9").kind,
              LinkDecision::Kind::kRewrite);
  }
  ASSERT_EQ(DecideOne(learner, "/p4.html?sid=9").kind, LinkDecision::Kind::kCheck);
  // It finds another page than /p4.html: one counter-example against 40 pairs leaves the
  // confidence above 0.95, but a check samples what the rule suppresses: the rule is retired.
  EXPECT_EQ(learner.Observe(Url("/p4.html?sid=9"), Page(999), false, ""), rule->id);
  rule = Find(learner.Records(), "drop-param sid");
  ASSERT_TRUE(rule);
  EXPECT_GE(rule->confidence(), 0.95);
  EXPECT_EQ(rule->state, RuleState::kRetired);
}

TEST(DustLearnerTest, ACheckFetchedBeforeThePageOfItsKeyIsJudgedWhenThatOneComes) {
  DustOptions options = Lenient();
  options.validation_sample = 0;
  DustLearner learner(options);
  SessionPairs(learner, 0, 40);
  for (int i = 41; i <= 43; ++i) DecideOne(learner, "/p" + std::to_string(i) + ".html?sid=9");
  // The 4th covered URL is a check; its key's page, /p44.html, comes after it (a check jumps the
  // queue) and is another page.
  ASSERT_EQ(DecideOne(learner, "/p44.html?sid=9").kind, LinkDecision::Kind::kCheck);
  learner.Observe(Url("/p44.html?sid=9"), Page(999), false, "");
  EXPECT_EQ(Find(learner.Records(), "drop-param sid")->state, RuleState::kActive);
  learner.Observe(Url("/p44.html"), Page(44), false, "");
  EXPECT_EQ(Find(learner.Records(), "drop-param sid")->state, RuleState::kRetired);
}

TEST(DustLearnerTest, APageNeitherClearlyNearNorFarCountsAgainstARule) {
  DustLearner learner(Lenient());
  // Copies whose SimHash is 5 bits from their page's: more than max_distance (3), less than twice
  // (pages that drift), then ten exact copies.
  for (int i = 10; i < 13; ++i) {
    const std::string page = Url("/p" + std::to_string(i) + ".html");
    PageFingerprint copy = Page(i);
    copy.digest += 1000;
    copy.simhash ^= 0x1F;
    learner.Observe(page, Page(i), false, "");
    learner.Observe(page + "?sid=1", copy, false, page);
  }
  SessionPairs(learner, 0, 10);
  // 10 of 13: still a plain candidate, never validated.
  EXPECT_FALSE(Find(learner.Records(), "drop-param sid"));
  EXPECT_EQ(DecideOne(learner, "/p1.html?sid=7").kind, LinkDecision::Kind::kKeep);
}

TEST(DustLearnerTest, OnAnOriginWithPageKindsADropRuleIsLearnedPerKind) {
  // One script whose page kind is a parameter (gitweb's `a`): a commit is named by h; a tree or
  // a blob by hb and f (h, its own hash, says nothing more).
  DustOptions options = Lenient();
  options.validation_sample = 0;  // active as soon as it has the support
  DustLearner learner(options);
  for (int i = 0; i < 10; ++i) {
    learner.Observe(Url("/app?a=commit&h=c" + std::to_string(i)), Page(100 + i), false, "");
  }
  for (const std::string kind : {"tree", "blob"}) {
    for (int i = 0; i < 12; ++i) {
      const std::string named = "/app?a=" + kind + "&f=" + kind + std::to_string(i) + "&hb=c1";
      learner.Observe(Url(named), Page(i), false, "");
      learner.Observe(Url(named + "&h=x" + std::to_string(i)), Page(i), false, Url(named));
    }
  }
  const std::vector<RuleRecord> records = learner.Records();
  for (const char* form : {"drop-param h where a=tree", "drop-param h where a=blob"}) {
    const std::optional<RuleRecord> rule = Find(records, form);
    ASSERT_TRUE(rule) << form;
    EXPECT_EQ(rule->state, RuleState::kActive) << form;
  }
  // The evidence, trees and blobs, does not speak for commits: no rule for the whole origin.
  EXPECT_FALSE(Find(records, "drop-param h"));
  EXPECT_EQ(DecideOne(learner, "/app?a=tree&f=src&h=x99&hb=c9").kind, LinkDecision::Kind::kRewrite);
  EXPECT_EQ(DecideOne(learner, "/app?a=commit&h=c99").kind, LinkDecision::Kind::kKeep);
}

TEST(DustLearnerTest, AKindWithoutAParameterItsOtherUrlsHaveIsLearnedOnItsOwn) {
  // Trees of a repository whose top level never changes: the root (a=tree, no f) is one page at
  // every commit hb; a directory (a=tree;f=src) is another page at each commit.
  DustOptions options = Lenient();
  options.validation_sample = 0;
  DustLearner learner(options);
  for (int i = 0; i < 10; ++i) {
    learner.Observe(Url("/app?a=commit&h=c" + std::to_string(i)), Page(100 + i), false, "");
    learner.Observe(Url("/app?a=tree&f=src&hb=c" + std::to_string(i)), Page(200 + i), false, "");
  }
  const std::string root = Url("/app?a=tree");
  learner.Observe(root, Page(1), false, "");
  for (int i = 10; i < 30; ++i) {
    learner.Observe(Url("/app?a=tree&f=src&hb=c" + std::to_string(i)), Page(200 + i), false, "");
    learner.Observe(Url("/app?a=tree&hb=c" + std::to_string(i)), Page(1), false, root);
  }
  const std::vector<RuleRecord> records = learner.Records();
  const std::optional<RuleRecord> scoped = Find(records, "drop-param hb where a=tree without f");
  ASSERT_TRUE(scoped);
  EXPECT_EQ(scoped->state, RuleState::kActive);
  const std::optional<RuleRecord> wide = Find(records, "drop-param hb where a=tree");
  EXPECT_TRUE(!wide || wide->state == RuleState::kCandidate);
  EXPECT_EQ(DecideOne(learner, "/app?a=tree&hb=c99").kind, LinkDecision::Kind::kRewrite);
  EXPECT_EQ(DecideOne(learner, "/app?a=tree&f=src&hb=c99").kind, LinkDecision::Kind::kKeep);
}

TEST(DustLearnerTest, RefutedCandidatesMakeRoomForNewOnes) {
  DustOptions options = Lenient();
  options.validation_sample = 0;
  options.max_candidates_per_origin = 3;
  DustLearner learner(options);
  // Two pairs propose drop-param v, drop-param v on /list and drop-param v=1: the table is full.
  for (int n = 0; n < 2; ++n) {
    const std::string page = Url("/list?page=" + std::to_string(n));
    learner.Observe(page, Page(n), false, "");
    learner.Observe(page + "&v=1", Page(n), false, page);
  }
  // Three pages say v selects content: the first two are refuted (2 for, 3 against).
  learner.Observe(Url("/list?page=0&v=2"), Page(900), false, "");
  learner.Observe(Url("/list?page=0&v=3"), Page(901), false, "");
  learner.Observe(Url("/list?page=1&v=2"), Page(902), false, "");
  // A parameter that never matters: its rule finds room, and is learned.
  for (int n = 10; n < 20; ++n) {
    const std::string page = Url("/list?page=" + std::to_string(n));
    learner.Observe(page, Page(n), false, "");
    learner.Observe(page + "&w=1", Page(n), false, page);
  }
  const std::optional<RuleRecord> rule = Find(learner.Records(), "drop-param w");
  ASSERT_TRUE(rule);
  EXPECT_EQ(rule->state, RuleState::kActive);
}

TEST(DustLearnerTest, ARuleNeedsEnoughPairsForItsConfidenceToBeSure) {
  DustLearner learner(DustOptions{});
  // Five pairs, none against: a confidence of 1, but as low as 0.57 at 95 %.
  SessionPairs(learner, 0, 5);
  EXPECT_FALSE(Find(learner.Records(), "drop-param sid"));
  // Sixteen: at least 0.8.
  SessionPairs(learner, 5, 16);
  const std::optional<RuleRecord> rule = Find(learner.Records(), "drop-param sid");
  ASSERT_TRUE(rule);
  EXPECT_EQ(rule->state, RuleState::kValidating);
}

TEST(DustLearnerTest, ACheckThatIsNotQueuedIsGivenBack) {
  DustLearner learner(Lenient());
  SessionPairs(learner, 0, 5);
  // The rule's three validation checks...
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(DecideOne(learner, "/p" + std::to_string(i) + ".html?sid=7").kind,
              LinkDecision::Kind::kCheck);
  }
  EXPECT_EQ(DecideOne(learner, "/p3.html?sid=7").kind, LinkDecision::Kind::kKeep);
  // ... of which one was a URL already seen: never fetched, so another URL takes its place.
  learner.CheckNotQueued(Url("/p1.html?sid=7"));
  EXPECT_EQ(DecideOne(learner, "/p3.html?sid=7").kind, LinkDecision::Kind::kCheck);
}

TEST(DustLearnerTest, ARetiredRuleForgetsOnlyThePagesOfTheKeysItMade) {
  DustOptions options = Lenient();
  options.validation_sample = 0;  // active as soon as it has the support
  options.check_every = 0;
  DustLearner learner(options);
  SessionPairs(learner, 0, 5);  // drop-param sid
  for (int i = 0; i < 5; ++i) {
    const std::string page = Url("/r" + std::to_string(i) + ".html");
    learner.Observe(page, Page(50 + i), false, "");
    learner.Observe(page + "?ref=x", Page(50 + i), false, page);
  }
  const std::optional<RuleRecord> sid = Find(learner.Records(), "drop-param sid");
  ASSERT_TRUE(sid);
  ASSERT_EQ(sid->state, RuleState::kActive);
  ASSERT_EQ(Find(learner.Records(), "drop-param ref")->state, RuleState::kActive);
  // /p1.html was fetched: /p1.html?sid=42, queued before, is skipped when its turn comes.
  EXPECT_EQ(learner.SkipFetched(Url("/p1.html?sid=42")), sid->id);
  // ref selects content after all: retired. What sid's keys remember stays.
  learner.Observe(Url("/r1.html?ref=y"), Page(999), false, "");
  ASSERT_EQ(Find(learner.Records(), "drop-param ref")->state, RuleState::kRetired);
  EXPECT_EQ(learner.SkipFetched(Url("/p1.html?sid=42")), sid->id);
  EXPECT_EQ(learner.SkipFetched(Url("/r2.html?ref=z")), "");
}

TEST(DustLearnerTest, BarrenPagesTeachASkipRule) {
  DustLearner learner(Lenient());
  for (int i = 0; i < 5; ++i) {
    learner.Observe(Url("/index.php?title=A" + std::to_string(i) + "&action=edit"), Page(i), true,
                    "");
    learner.Observe(Url("/index.php?title=A" + std::to_string(i)), Page(100 + i), false, "");
  }
  std::optional<RuleRecord> rule = Find(learner.Records(), "skip-param action=edit");
  ASSERT_TRUE(rule);
  EXPECT_EQ(rule->state, RuleState::kValidating);
  // The path also serves articles: skip-path /index.php has contradictions.
  EXPECT_FALSE(Find(learner.Records(), "skip-path /index.php"));
  for (int i = 5; i < 8; ++i) {
    const std::string tail = "/index.php?title=B" + std::to_string(i) + "&action=edit";
    ASSERT_EQ(DecideOne(learner, tail).kind, LinkDecision::Kind::kCheck);
    learner.Observe(Url(tail), Page(i), true, "");
  }
  const LinkDecision skip = DecideOne(learner, "/index.php?title=Z&action=edit");
  EXPECT_EQ(skip.kind, LinkDecision::Kind::kSkip);
  EXPECT_EQ(DecideOne(learner, "/index.php?title=Z").kind, LinkDecision::Kind::kKeep);
}

TEST(DustLearnerTest, PathFormsAreExplainedByTheirPairs) {
  DustLearner learner(Lenient());
  for (int i = 0; i < 5; ++i) {
    const std::string n = std::to_string(i);
    learner.Observe(Url("/docs/p" + n + ".html"), Page(i), false, "");
    learner.Observe(Url("/mirror/docs/p" + n + ".html"), Page(i), false,
                    Url("/docs/p" + n + ".html"));
    learner.Observe(Url("/wiki/A" + n), Page(10 + i), false, "");
    learner.Observe(Url("/index.php?title=A" + n), Page(10 + i), false, Url("/wiki/A" + n));
    learner.Observe(Url("/d" + n + "/"), Page(20 + i), false, "");
    learner.Observe(Url("/d" + n + "/index.html"), Page(20 + i), false, Url("/d" + n + "/"));
    learner.Observe(Url("/s?a=1&b=" + n), Page(30 + i), false, "");
    learner.Observe(Url("/s?b=" + n + "&a=1"), Page(30 + i), false, Url("/s?a=1&b=" + n));
  }
  const std::vector<RuleRecord> records = learner.Records();
  for (std::string_view form : {"alias /mirror/ /", "param-path /index.php title /wiki/",
                                "index-file index.html", "sort-params"}) {
    std::optional<RuleRecord> rule = Find(records, form);
    ASSERT_TRUE(rule) << form;
    EXPECT_EQ(rule->state, RuleState::kValidating) << form;
    EXPECT_FALSE(rule->example.empty());
  }
}

TEST(DustLearnerTest, LearnModeValidatesFromWhatIsFetchedButNeverSuppresses) {
  DustOptions options = Lenient();
  options.mode = DustMode::kLearn;
  DustLearner learner(options);
  SessionPairs(learner, 0, 5);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(DecideOne(learner, "/p" + std::to_string(i) + ".html?sid=7").kind,
              LinkDecision::Kind::kKeep);
    learner.Observe(Url("/p" + std::to_string(i) + ".html?sid=7"), Page(i), false, "");
  }
  std::optional<RuleRecord> rule = Find(learner.Records(), "drop-param sid");
  ASSERT_TRUE(rule);
  EXPECT_EQ(rule->state, RuleState::kActive);
  EXPECT_EQ(DecideOne(learner, "/p1.html?sid=8").kind, LinkDecision::Kind::kKeep);
  EXPECT_EQ(learner.counters().validation_fetches, 0u);
}

TEST(DustLearnerTest, PinnedRulesApplyAtOnceAndForbiddenOnesNever) {
  DustLearner learner(Lenient());
  ASSERT_TRUE(learner.AddUserRule(kSite, "drop-param utm_source", true).ok());
  ASSERT_TRUE(learner.AddUserRule(kSite, "drop-param sid", false).ok());
  EXPECT_FALSE(learner.AddUserRule(kSite, "drop-everything", true).ok());
  const LinkDecision pinned = DecideOne(learner, "/a?utm_source=x");
  EXPECT_EQ(pinned.kind, LinkDecision::Kind::kRewrite);
  EXPECT_EQ(pinned.rule_key, Url("/a"));
  SessionPairs(learner, 0, 10);
  PassChecks(learner, 10);
  const std::vector<RuleRecord> records = learner.Records();
  std::optional<RuleRecord> forbidden = Find(records, "drop-param sid");
  ASSERT_TRUE(forbidden);
  EXPECT_TRUE(forbidden->forbidden);
  EXPECT_EQ(forbidden->state, RuleState::kCandidate);
  // A pinned rule is not retired by a contradiction.
  learner.Observe(Url("/b?utm_source=1"), Page(1), false, "");
  learner.Observe(Url("/b?utm_source=2"), Page(2), false, "");
  std::optional<RuleRecord> pin = Find(learner.Records(), "drop-param utm_source");
  ASSERT_TRUE(pin);
  EXPECT_EQ(pin->state, RuleState::kActive);
}

// Decide's filters (a query's parameter names, a path's prefixes and suffixes, the origin compared
// with the previous link's) may say "maybe" but never "no" for a link a rule covers: every link is
// decided as its rules alone decide it. Queries up to 90 bytes, with ';', empty parameters, names
// that begin or end like a rule's; paths short and long; keys shorter than the 16 bytes read back
// from a query's end.
TEST(DustLearnerTest, PinnedRulesDecideEveryLinkAsTheRulesThemselvesDo) {
  const std::vector<std::vector<std::string_view>> rule_sets = {
      {"drop-param sid", "skip-param action=edit", "alias /mirror/ /", "index-file index.html"},
      {"sort-params", "drop-param utm_source"},
      {"drop-param a,id,q,s,sid,x", "skip-path /a/very/long/path", "alias /mirror/of/a/ /",
       "index-file default.aspx"},
      {"ignore-case", "drop-param sid=1", "skip-path /a", "index-file i.htm"},
      {"param-path /index.php title /wiki/", "drop-param hb=master on /gitweb.cgi"},
  };
  // Two of the same length: a link compared with the previous one's origin byte by byte.
  const std::vector<std::string_view> origins = {kSite, "http://a.io", "http://example.com",
                                                 "http://example.org"};
  const std::vector<std::string_view> segments = {
      "mirror",       "index.html", "a", "very", "long",       "path",      "of",  "A",
      "default.aspx", "i.htm",      "x", "",     "gitweb.cgi", "index.php", "wiki"};
  const std::vector<std::string_view> tokens = {
      "sid", "action", "edit", "s", "=",  "&",      ";",          "id",    "sidx", "xsid",
      "a",   "1",      "q",    "x", "hb", "master", "utm_source", "title", "%3D",  "&&"};
  uint64_t state = 12345;
  auto below = [&](size_t n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<size_t>((state >> 33) % n);
  };
  const UrlCanonicalizer canonicalizer;
  for (const std::vector<std::string_view>& forms : rule_sets) {
    DustLearner learner(Lenient());
    std::vector<UrlRule> skips;
    std::vector<UrlRule> rewrites;
    for (std::string_view form : forms) {
      for (std::string_view origin : origins) {
        ASSERT_TRUE(learner.AddUserRule(origin, form, true).ok()) << form;
      }
      Result<UrlRule> rule = UrlRule::Parse(form);
      ASSERT_TRUE(rule.ok());
      (rule->skips() ? skips : rewrites).push_back(*rule);
    }
    auto by_form = [](const UrlRule& x, const UrlRule& y) { return x.Form() < y.Form(); };
    std::sort(skips.begin(), skips.end(), by_form);
    std::sort(rewrites.begin(), rewrites.end(), by_form);
    std::vector<CanonicalUrl> urls;
    for (int i = 0; i < 4000; ++i) {
      std::string url(origins[below(origins.size())]);
      const size_t depth = below(4);
      for (size_t d = 0; d <= depth; ++d) url.append("/").append(segments[below(segments.size())]);
      if (below(4) != 0) {
        url += '?';
        const size_t length = below(90);
        while (url.size() < url.find('?') + 1 + length) url += tokens[below(tokens.size())];
      }
      Result<CanonicalUrl> canonical = canonicalizer.Canonicalize(url);
      ASSERT_TRUE(canonical.ok()) << url;
      urls.push_back(std::move(*canonical));
    }
    // Keys shorter than 16 bytes.
    for (std::string_view query : {"s", "q", "a", "x", "id", "s;", "q&", "&s", ";q", "=s",
                                   "s=", "sid", "s&x", "a;q", "x=1"}) {
      Result<CanonicalUrl> canonical =
          canonicalizer.Canonicalize("http://a.io/?" + std::string(query));
      ASSERT_TRUE(canonical.ok()) << query;
      urls.push_back(std::move(*canonical));
    }
    // Links of one origin in runs, as a page's are.
    std::stable_sort(urls.begin(), urls.end(), [](const CanonicalUrl& a, const CanonicalUrl& b) {
      return a.path().size() % 3 < b.path().size() % 3;
    });
    std::vector<LinkDecision> decisions;
    for (size_t from = 0; from < urls.size(); from += 64) {
      const size_t n = std::min<size_t>(64, urls.size() - from);
      learner.Decide(std::span<const CanonicalUrl>(urls.data() + from, n), &decisions);
      size_t next = 0;
      for (size_t i = 0; i < n; ++i) {
        const CanonicalUrl& url = urls[from + i];
        LinkDecision expected;
        auto skip = std::find_if(skips.begin(), skips.end(), [&](const UrlRule& r) {
          return r.Matches(url.path(), url.query());
        });
        if (skip != skips.end()) {
          expected.kind = LinkDecision::Kind::kSkip;
          expected.rule_id = RuleId(url.origin(), *skip);
        } else {
          UrlTail tail{std::string(url.path()), std::string(url.query())};
          for (const UrlRule& rule : rewrites) {
            if (rule.Rewrite(&tail) && expected.rule_id.empty()) {
              expected.rule_id = RuleId(url.origin(), rule);
            }
          }
          if (!expected.rule_id.empty()) {
            expected.kind = LinkDecision::Kind::kRewrite;
            expected.rule_key = JoinTail(url.origin(), tail);
          }
        }
        if (expected.kind == LinkDecision::Kind::kKeep) {
          EXPECT_TRUE(next == decisions.size() || decisions[next].index != i) << url.key();
          continue;
        }
        ASSERT_LT(next, decisions.size()) << url.key();
        const LinkDecision& got = decisions[next++];
        EXPECT_EQ(got.index, i) << url.key();
        EXPECT_EQ(got.kind, expected.kind) << url.key();
        EXPECT_EQ(got.rule_id, expected.rule_id) << url.key();
        EXPECT_EQ(got.rule_key, expected.rule_key) << url.key();
      }
      EXPECT_EQ(next, decisions.size());
    }
  }
}

TEST(DustLearnerTest, RestoredRulesKeepTheirStateAndSuppressedUrls) {
  DustLearner learner(Lenient());
  SessionPairs(learner, 0, 5);
  PassChecks(learner, 5);
  const LinkDecision decision = DecideOne(learner, "/p4.html?sid=9");
  learner.Suppressed({decision.rule_id, Url("/p4.html?sid=9"), 1, Url("/")});

  DustLearner restored(DustOptions{});
  restored.Restore(learner.Records(), learner.TakeNewSuppressed(), learner.counters());
  EXPECT_EQ(restored.counters().suppressed, 1u);
  EXPECT_EQ(restored.counters().rules_active, learner.counters().rules_active);
  EXPECT_EQ(DecideOne(restored, "/p3.html?sid=2").kind, LinkDecision::Kind::kRewrite);
  // The restored rule has no page table: a contradiction comes from a page seen after the restart.
  restored.Observe(Url("/p1.html"), Page(1), false, "");
  restored.Observe(Url("/p1.html?sid=3"), Page(77), false, "");
  EXPECT_EQ(restored.TakeRequeue().size(), 1u);
}

}  // namespace
}  // namespace urlsieve

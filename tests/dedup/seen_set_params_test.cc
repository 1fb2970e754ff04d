// The stored seen-set parameters (seen_set_params.h): the fields the state directory and the Redis
// seen set write are those earlier builds wrote, byte for byte, in the same order; the decoder
// reads them back and names the store and the field when one is missing or unreadable.
#include "dedup/seen_set_params.h"

#include <gtest/gtest.h>

#include <string>

namespace urlsieve {
namespace {

StoredFields AsStored(const FieldList& list) {
  StoredFields fields;
  for (const auto& [name, value] : list) fields[name] = value;
  return fields;
}

StateParameters Plain() {
  StateParameters p;
  p.capacity = 1000000;
  p.fp_rate = 0.001;
  return p;
}

TEST(SeenSetParamsTest, APlainSetWritesTheFourCoreFieldsInBothStores) {
  const std::string canonicalize = EncodeStoredCanonicalize(CanonicalizeOptions());
  const FieldList expected = {{"capacity", "1000000"},
                              {"fp_rate", "0.001"},
                              {"exact", "0"},
                              {"canonicalize", canonicalize}};
  EXPECT_EQ(EncodeStoredParameters(Plain(), StoredTimeFields::kEachWhenSet), expected);
  EXPECT_EQ(EncodeStoredParameters(Plain(), StoredTimeFields::kAllOrNone), expected);
  EXPECT_FALSE(HasStoredTimeFields(Plain()));
}

TEST(SeenSetParamsTest, TimeAndCountingFieldsAreWrittenAsEachStoreDid) {
  StateParameters deletable = Plain();
  deletable.deletable = true;
  // The state directory: only the deletable row; the Redis meta (version 2): all three.
  FieldList state = EncodeStoredParameters(deletable, StoredTimeFields::kEachWhenSet);
  ASSERT_EQ(state.size(), kStoredCoreFields + 1);
  EXPECT_EQ(state.back(), (std::pair<std::string, std::string>("deletable", "1")));
  FieldList redis = EncodeStoredParameters(deletable, StoredTimeFields::kAllOrNone);
  ASSERT_EQ(redis.size(), kStoredCoreFields + 3);
  EXPECT_EQ(redis[kStoredCoreFields].first, "revisit_after");
  EXPECT_EQ(redis[kStoredCoreFields].second, "0");
  EXPECT_EQ(redis[kStoredCoreFields + 1].second, "0");
  EXPECT_EQ(redis[kStoredCoreFields + 2].second, "1");

  StateParameters timed = Plain();
  timed.revisit_after_s = 86400;
  timed.generations = 4;
  state = EncodeStoredParameters(timed, StoredTimeFields::kEachWhenSet);
  ASSERT_EQ(state.size(), kStoredCoreFields + 2);
  EXPECT_EQ(state[kStoredCoreFields].second, "86400");
  EXPECT_EQ(state[kStoredCoreFields + 1].second, "4");
  redis = EncodeStoredParameters(timed, StoredTimeFields::kAllOrNone);
  ASSERT_EQ(redis.size(), kStoredCoreFields + 3);
  EXPECT_EQ(redis.back(), (std::pair<std::string, std::string>("deletable", "0")));
}

TEST(SeenSetParamsTest, WhatIsWrittenReadsBack) {
  StateParameters p = Plain();
  p.exact = true;
  p.fp_rate = 1.0 / 3;  // %.17g round-trips
  p.revisit_after_s = 3600;
  p.generations = 6;
  p.canonicalize.strip_www = true;
  for (StoredTimeFields time : {StoredTimeFields::kEachWhenSet, StoredTimeFields::kAllOrNone}) {
    StoredParameterRules rules;
    rules.where = "test";
    rules.time = time;
    rules.has_time_fields = true;
    auto read = DecodeStoredParameters(AsStored(EncodeStoredParameters(p, time)), rules);
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    EXPECT_EQ(read->capacity, p.capacity);
    EXPECT_EQ(read->fp_rate, p.fp_rate);
    EXPECT_TRUE(read->exact);
    EXPECT_EQ(read->revisit_after_s, 3600u);
    EXPECT_EQ(read->generations, 6u);
    EXPECT_FALSE(read->deletable);
    EXPECT_EQ(EncodeStoredCanonicalize(read->canonicalize),
              EncodeStoredCanonicalize(p.canonicalize));
  }
}

TEST(SeenSetParamsTest, ARedisMetaOfVersionOneIgnoresTimeFields) {
  StoredFields fields = AsStored(EncodeStoredParameters(Plain(), StoredTimeFields::kAllOrNone));
  fields["revisit_after"] = "garbage";
  StoredParameterRules rules;
  rules.where = "meta";
  rules.time = StoredTimeFields::kAllOrNone;
  rules.has_time_fields = false;
  auto read = DecodeStoredParameters(fields, rules);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->revisit_after_s, 0u);
}

TEST(SeenSetParamsTest, ErrorsNameTheStoreAndTheField) {
  StoredParameterRules rules;
  rules.where = "DIR/state.db: urlsieve_meta";
  const StoredFields good =
      AsStored(EncodeStoredParameters(Plain(), StoredTimeFields::kEachWhenSet));
  struct Case {
    const char* field;
    const char* value;  // nullptr: the field is absent
  };
  for (const Case& c :
       {Case{"capacity", "0"}, Case{"capacity", "12x"}, Case{"capacity", nullptr},
        Case{"fp_rate", "1"}, Case{"fp_rate", "0.1 "}, Case{"exact", "yes"}, Case{"deletable", "2"},
        Case{"revisit_after", "0"}, Case{"revisit_after", "60"}}) {
    StoredFields fields = good;
    if (c.value == nullptr) {
      fields.erase(c.field);
    } else {
      fields[c.field] = c.value;
    }
    auto read = DecodeStoredParameters(fields, rules);
    ASSERT_FALSE(read.ok()) << c.field;
    EXPECT_EQ(read.status().code(), StatusCode::kCorruption);
    // revisit_after 60 without generations: the generations field is named.
    // Built with append: GCC 12 at -O3 warns falsely (-Wrestrict) on "'" + std::string.
    std::string named = "'";
    named.append(std::string(c.field) == "revisit_after" && std::string(c.value) == "60"
                     ? "generations"
                     : c.field);
    named.append("'");
    EXPECT_NE(read.status().message().find(rules.where), std::string::npos);
    EXPECT_NE(read.status().message().find(named), std::string::npos) << read.status().ToString();
  }
  // Generations above the store's bound.
  StoredFields timed = good;
  timed["revisit_after"] = "60";
  timed["generations"] = "65";
  rules.max_generations = 64;
  EXPECT_EQ(DecodeStoredParameters(timed, rules).status().code(), StatusCode::kCorruption);
  timed["generations"] = "64";
  EXPECT_TRUE(DecodeStoredParameters(timed, rules).ok());
  // The canonicalizer's own error keeps its code and gains the store's name.
  StoredFields future = good;
  future["canonicalize"] = "key_version=99," + good.at("canonicalize");
  auto read = DecodeStoredParameters(future, rules);
  EXPECT_EQ(read.status().code(), StatusCode::kUnsupported);
  EXPECT_EQ(read.status().message().rfind(rules.where, 0), 0u) << read.status().ToString();
}

}  // namespace
}  // namespace urlsieve

#include "dedup/redis_seen_function.h"

#include <cstdint>
#include <string>

namespace urlsieve {
namespace {

constexpr uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// Lua numbers are doubles, exact below 2^53: every product below stays under it (a 26-bit
// position word times a 26-bit multiplier; a 30-bit block word times < 2^23 blocks; a 32-bit
// bucket word times < 2^21 buckets).
//
// A batch's keys are tested against every older layer (BITFIELD_RO GET, one call per layer and
// per chunk of ≤ kMaxOps bits: Lua's unpack takes ≤ 8000 values), then test-and-set in the newest
// (BITFIELD SET, which returns the old bits: a key whose bits were all set was there). In exact
// mode a Bloom "maybe" in an older layer is confirmed by HEXISTS in that layer's bucket, and in
// the newest layer HSETNX decides. When the newest layer holds its capacity the function adds the
// next one (its string created at full size) before inserting more: it inserts in chunks no
// larger than the room left, so a layer overshoots its capacity by nothing.
constexpr const char* kBody = R"LUA(
local T17, T26, T30, T32 = 131072, 67108864, 1073741824, 4294967296
local MAXOPS = 1800
local parsed = {}

local function layers_of(text)
  local t = parsed[text]
  if t then return t end
  t = {}
  for cap, blocks, bits, buckets in string.gmatch(text, '(%d+),(%d+),(%d+),(%d+),[^;]*') do
    t[#t + 1] = {cap = tonumber(cap), blocks = tonumber(blocks), bits = tonumber(bits),
                 buckets = tonumber(buckets)}
  end
  parsed[text] = t
  return t
end

-- all[q] = whether every bit of key idx[q] is set in layer `layer` (string `key`), before this
-- call's writes when `set`.
local function probe(key, layer, set, P, B, idx, all)
  local k, blocks = layer.bits, layer.blocks
  local per = math.max(1, math.floor(MAXOPS / k))
  local count = #idx
  local j = 1
  while j <= count do
    local last = math.min(count, j + per - 1)
    local args, n = {}, 0
    for q = j, last do
      local i = idx[q]
      local p = P[i]
      local base = math.floor(B[i] * blocks / T30) * 512
      for b = 1, k do
        local off = base + math.floor((p * M[b]) % T26 / T17)
        if set then
          args[n + 1] = 'SET'; args[n + 2] = 'u1'; args[n + 3] = off; args[n + 4] = 1; n = n + 4
        else
          args[n + 1] = 'GET'; args[n + 2] = 'u1'; args[n + 3] = off; n = n + 3
        end
      end
    end
    local r
    if set then
      r = redis.call('BITFIELD', key, unpack(args, 1, n))
    else
      r = redis.call('BITFIELD_RO', key, unpack(args, 1, n))
    end
    local pos = 1
    for q = j, last do
      local ok = true
      for b = 1, k do
        if r[pos] == 0 then ok = false end
        pos = pos + 1
      end
      all[q] = ok
    end
    j = last + 1
  end
end

local function bucket(prefix, l, layer, w)
  return prefix .. 'fp:' .. l .. ':' .. math.floor(w * layer.buckets / T32)
end

local function decode(argv, first, stride, nkeys, P, B, W, F)
  for i = 1, nkeys do
    local fp = argv[first + (i - 1) * stride]
    if #fp ~= 16 then return redis.error_reply('ERR urlsieve: a fingerprint is not 16 bytes') end
    local _, w1, w2, w3 = struct.unpack('>I4I4I4I4', fp)
    P[i] = w1 % T26
    B[i] = math.floor(w2 / 4)
    W[i] = w3
    F[i] = string.sub(fp, 1, 14)
  end
  return nil
end

local function shard_state(count_key)
  local state = redis.call('HMGET', count_key, 'layers', 'count', 'table', 'maybe', 'fp')
  if not state[1] or not state[3] then return nil end
  return tonumber(state[1]), tonumber(state[2]), layers_of(state[3]), tonumber(state[4] or '0'),
         tonumber(state[5] or '0')
end

-- The keys of `list` not in layer l (exact: confirmed in its buckets).
local function absent_from(prefix, l, layer, exact, list, P, B, W, F, stats)
  local all = {}
  probe(prefix .. 'bloom:' .. l, layer, false, P, B, list, all)
  local rest = {}
  for q = 1, #list do
    local i = list[q]
    local found = all[q]
    if found and exact then
      stats.maybe = stats.maybe + 1
      found = redis.call('HEXISTS', bucket(prefix, l, layer, W[i]), F[i]) == 1
      if not found then stats.fp = stats.fp + 1 end
    end
    if not found then rest[#rest + 1] = i end
  end
  return rest
end

local function insert(keys, argv)
  local count_key = keys[1]
  local prefix = string.sub(count_key, 1, -6)
  local exact = argv[1] == '1'
  local token, seq, claims, generation = argv[2], argv[3], argv[4], argv[5]
  local done_key
  if token ~= '' then
    done_key = prefix .. 'done:' .. token
    local done = redis.call('GET', done_key)
    if done then
      local bar = string.find(done, '|', 1, true)
      if bar and string.sub(done, 1, bar - 1) == seq then return string.sub(done, bar + 1) end
    end
  end
  local nlayers, count, layers, maybe, fps = shard_state(count_key)
  if not nlayers then
    return redis.error_reply('NOINIT urlsieve: shard ' .. count_key .. ' is not initialized')
  end
  local stride = (claims ~= '') and 2 or 1
  local nkeys = (#argv - 5) / stride
  local P, B, W, F = {}, {}, {}, {}
  local err = decode(argv, 6, stride, nkeys, P, B, W, F)
  if err then return err end
  local stats = {maybe = maybe, fp = fps}
  local answer = {}
  local pending = {}
  for i = 1, nkeys do
    answer[i] = '0'
    pending[i] = i
  end
  local newest = nlayers - 1
  for l = 0, newest - 1 do
    pending = absent_from(prefix, l, layers[l + 1], exact, pending, P, B, W, F, stats)
  end
  local fresh = {}
  local changed = false
  local q = 1
  while q <= #pending do
    local layer = layers[newest + 1]
    local room = layer.cap - count
    if room < 1 and newest + 1 < #layers then
      local next_layer = layers[newest + 2]
      redis.call('SET', prefix .. 'bloom:' .. (newest + 1), string.rep('\0', next_layer.blocks * 64),
                 'NX')
      redis.call('HSET', count_key, 'n' .. newest, count)
      newest = newest + 1
      count = 0
      changed = true
      local rest = {}
      for r = q, #pending do rest[#rest + 1] = pending[r] end
      pending = absent_from(prefix, newest - 1, layers[newest], exact, rest, P, B, W, F, stats)
      q = 1
      layer = next_layer
      room = layer.cap
    end
    if room < 1 then room = #pending end
    local last = math.min(#pending, q + room - 1)
    local chunk = {}
    for r = q, last do chunk[#chunk + 1] = pending[r] end
    local all = {}
    probe(prefix .. 'bloom:' .. newest, layer, true, P, B, chunk, all)
    for c = 1, #chunk do
      local i = chunk[c]
      local new = not all[c]
      if exact then
        if all[c] then stats.maybe = stats.maybe + 1 end
        new = redis.call('HSETNX', bucket(prefix, newest, layer, W[i]), F[i], '') == 1
        if all[c] and new then stats.fp = stats.fp + 1 end
      end
      if new then
        answer[i] = '1'
        count = count + 1
        fresh[#fresh + 1] = i
      end
    end
    q = last + 1
  end
  if changed or #fresh > 0 or stats.maybe ~= maybe then
    redis.call('HSET', count_key, 'layers', newest + 1, 'count', count, 'maybe', stats.maybe,
               'fp', stats.fp)
  end
  if claims ~= '' and #fresh > 0 then
    local list = prefix .. 'claims:' .. claims
    local j = 1
    while j <= #fresh do
      local last = math.min(#fresh, j + 4000)
      local items = {}
      for r = j, last do
        items[#items + 1] = generation .. ' ' .. argv[6 + (fresh[r] - 1) * 2 + 1]
      end
      redis.call('RPUSH', list, unpack(items))
      j = last + 1
    end
  end
  local result = table.concat(answer)
  if done_key then redis.call('SET', done_key, seq .. '|' .. result, 'EX', 300) end
  return result
end

local function contains(keys, argv)
  local count_key = keys[1]
  local prefix = string.sub(count_key, 1, -6)
  local exact = argv[1] == '1'
  local nlayers, _, layers = shard_state(count_key)
  if not nlayers then
    return redis.error_reply('NOINIT urlsieve: shard ' .. count_key .. ' is not initialized')
  end
  local nkeys = #argv - 1
  local P, B, W, F = {}, {}, {}, {}
  local err = decode(argv, 2, 1, nkeys, P, B, W, F)
  if err then return err end
  local stats = {maybe = 0, fp = 0}
  local pending = {}
  for i = 1, nkeys do pending[i] = i end
  for l = 0, nlayers - 1 do
    pending = absent_from(prefix, l, layers[l + 1], exact, pending, P, B, W, F, stats)
  end
  local answer = {}
  for i = 1, nkeys do answer[i] = '1' end
  for q = 1, #pending do answer[pending[q]] = '0' end
  return table.concat(answer)
end

local function init(keys, argv)
  local count_key = keys[1]
  local prefix = string.sub(count_key, 1, -6)
  local identity = redis.call('HGET', count_key, 'identity')
  if identity then
    if identity ~= argv[2] then
      return redis.error_reply('IDENTITY urlsieve: ' .. count_key .. ' belongs to set ' ..
                               identity .. ', not ' .. argv[2])
    end
    return 'OK'
  end
  local bloom = prefix .. 'bloom:0'
  if redis.call('EXISTS', bloom) == 1 or redis.call('EXISTS', count_key) == 1 then
    return redis.error_reply('CORRUPT urlsieve: ' .. count_key .. ' has no identity but ' ..
                             'the shard has keys')
  end
  local layers = layers_of(argv[1])
  if #layers == 0 then return redis.error_reply('ERR urlsieve: empty layer table') end
  redis.call('SET', bloom, string.rep('\0', layers[1].blocks * 64))
  redis.call('HSET', count_key, 'identity', argv[2], 'table', argv[1], 'layers', 1, 'count', 0,
             'maybe', 0, 'fp', 0)
  return 'OK'
end

local function create(keys, argv)
  if redis.call('EXISTS', keys[1]) == 0 then redis.call('HSET', keys[1], unpack(argv)) end
  return redis.call('HGETALL', keys[1])
end

redis.register_function('urlsieve_v1_create', create)
redis.register_function('urlsieve_v1_init', init)
redis.register_function('urlsieve_v1_insert', insert)
redis.register_function{function_name = 'urlsieve_v1_contains', callback = contains,
                        flags = {'no-writes'}}
)LUA";

std::string BuildSource() {
  std::string source =
      "#!lua name=urlsieve_v1\n-- urlsieve's RedisSeenSet (dedup/redis_seen_function.cc)\nlocal M "
      "= {";
  for (int b = 0; b < kRedisSeenMaxBits; ++b) {
    if (b > 0) source += ',';
    source += std::to_string(RedisSeenBitMultiplier(b));
  }
  source += "}\n";
  source += kBody;
  return source;
}

}  // namespace

unsigned RedisSeenBitMultiplier(int b) {
  return static_cast<unsigned>((SplitMix64(static_cast<uint64_t>(b)) & ((1u << 26) - 1)) | 1);
}

const std::string& RedisSeenLibrarySource() {
  static const std::string source = BuildSource();
  return source;
}

}  // namespace urlsieve

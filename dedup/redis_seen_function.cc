#include "dedup/redis_seen_function.h"

#include <cstdint>
#include <string>

namespace urlsieve {
namespace {

// The client computes every bit offset and bucket (Lua numbers are doubles, and converting a
// number to a string costs Lua a sprintf, several times what BITFIELD itself spends per bit): the
// function moves strings from ARGV into BITFIELD calls and decides.
//
// Arguments of insert: exact, token, seq, claim log, generation, P (the layers the client gives
// offsets for), then per key: [its field (exact)] [its payload (claim log)] and for each layer
// l < P: [its bucket in l (exact)] and its layer-l bit offsets (k_l of them). insert_routed:
// exact, token, seq, group, P, then per key the same with its payload always. Contains: exact, P,
// then per key the same without the payload.
//
// A batch's keys are tested against every older layer (BITFIELD_RO GET, one call per layer and
// per chunk of ≤ MAXOPS bits: Lua's unpack takes ≤ 8000 values), then test-and-set in the newest
// (BITFIELD SET returns the old bits: a key whose bits were all set was there). In exact mode a
// Bloom "maybe" in an older layer is confirmed by HEXISTS in that layer's bucket, and in the
// newest layer HSETNX decides. When the newest layer holds its capacity and a key of the batch is
// not in it, the function adds the next one (its string created at full size) before inserting
// more: it inserts in chunks no larger than the room left, so a layer never passes its capacity,
// and a batch of repeats never grows a shard. If the shard has more layers
// than the client gave offsets for, or the batch might need more, it writes nothing and answers
// "STALE <layers> <count>"; the client sends it again with more.
constexpr const char* kBody = R"LUA(
local MAXOPS = 1800
local parsed = {}

local function layers_of(text)
  local t = parsed[text]
  if t then return t end
  t = {}
  for cap, blocks, bits, buckets in string.gmatch(text, '(%d+),(%d+),(%d+),(%d+)') do
    t[#t + 1] = {cap = tonumber(cap), blocks = tonumber(blocks), bits = tonumber(bits),
                 buckets = tonumber(buckets)}
  end
  parsed[text] = t
  return t
end

-- all[q] = whether every bit of the key whose layer offsets start at argv[at[q]] is set in
-- string `key` (before this call's writes when `set`).
local function probe(key, k, set, argv, at, all)
  local per = math.max(1, math.floor(MAXOPS / k))
  local count = #at
  local j = 1
  while j <= count do
    local last = math.min(count, j + per - 1)
    local args, n = {}, 0
    for q = j, last do
      local a = at[q]
      for b = a, a + k - 1 do
        if set then
          args[n + 1] = 'SET'; args[n + 2] = 'u1'; args[n + 3] = argv[b]; args[n + 4] = '1'
          n = n + 4
        else
          args[n + 1] = 'GET'; args[n + 2] = 'u1'; args[n + 3] = argv[b]
          n = n + 3
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

-- Where each key's arguments are: key i's start is first + (i - 1) * stride; relative to it,
-- layer l's part starts at starts[l].
local function arguments(layers, provided, exact, claim)
  local e = exact and 1 or 0
  local at = e + (claim and 1 or 0)
  local starts = {}
  for l = 0, provided - 1 do
    starts[l] = at
    at = at + e + layers[l + 1].bits
  end
  return starts, at
end

local function shard_state(count_key)
  local state = redis.call('HMGET', count_key, 'layers', 'count', 'table', 'maybe', 'fp')
  if not state[1] or not state[3] then return nil end
  return tonumber(state[1]), tonumber(state[2]), layers_of(state[3]), tonumber(state[4] or '0'),
         tonumber(state[5] or '0')
end

-- The keys of `list` (key starts) not in layer l (exact: confirmed in its buckets).
local function absent_from(c, l, list)
  local layer = c.layers[l + 1]
  local start = c.starts[l]
  local e = c.exact and 1 or 0
  local at = {}
  for q = 1, #list do at[q] = list[q] + start + e end
  local all = {}
  probe(c.prefix .. 'bloom:' .. l, layer.bits, false, c.argv, at, all)
  local rest = {}
  for q = 1, #list do
    local found = all[q]
    if found and c.exact then
      local base = list[q]
      c.maybe = c.maybe + 1
      found = redis.call('HEXISTS', c.prefix .. 'fp:' .. l .. ':' .. c.argv[base + start],
                         c.argv[base]) == 1
      if not found then c.fp = c.fp + 1 end
    end
    if not found then rest[#rest + 1] = list[q] end
  end
  return rest
end

local function stale(nlayers, count)
  return redis.error_reply('STALE ' .. nlayers .. ' ' .. count)
end

-- The answer of an earlier run of the same call (its token and sequence number), if kept.
local function replayed(prefix, token, seq)
  if token == '' then return nil, nil end
  local done_key = prefix .. 'done:' .. token
  local done = redis.call('GET', done_key)
  if done then
    local bar = string.find(done, '|', 1, true)
    if bar and string.sub(done, 1, bar - 1) == seq then
      return done_key, {string.sub(done, bar + 1), 0, 0}
    end
  end
  return done_key, nil
end

-- The test-and-set of a batch in one shard (insert and insert_routed): the batch's key
-- arguments follow `head` leading arguments, each key's starting with [field (exact)]
-- [payload (with_payload)]. Returns nil and an error reply (nothing written), or a table:
-- answer (one character per key), fresh (the argument starts of the keys told new), layers,
-- count.
local function test_and_set(count_key, exact, provided, with_payload, argv, head)
  local prefix = string.sub(count_key, 1, -6)
  local nlayers, count, layers, maybe, fps = shard_state(count_key)
  if not nlayers then
    return nil, redis.error_reply('NOINIT urlsieve: shard ' .. count_key .. ' is not initialized')
  end
  if not provided or provided < 1 or provided > #layers then
    return nil, redis.error_reply('ERR urlsieve: bad layer count')
  end
  local starts, stride = arguments(layers, provided, exact, with_payload)
  local nkeys = (#argv - head) / stride
  if nkeys ~= math.floor(nkeys) then
    return nil, redis.error_reply('ERR urlsieve: ' .. (#argv - head) ..
                                  ' key arguments in strides of ' .. stride)
  end
  if nlayers > provided then return nil, stale(nlayers, count) end
  local room = layers[nlayers].cap - count
  for l = nlayers, provided - 1 do room = room + layers[l + 1].cap end
  if room < nkeys and provided < #layers then return nil, stale(nlayers, count) end

  local c = {prefix = prefix, argv = argv, layers = layers, starts = starts, exact = exact,
             maybe = maybe, fp = fps}
  local e = exact and 1 or 0
  local answer = {}
  local pending = {}
  for i = 1, nkeys do
    answer[i] = '0'
    pending[i] = head + 1 + (i - 1) * stride
  end
  local newest = nlayers - 1
  for l = 0, newest - 1 do pending = absent_from(c, l, pending) end
  local fresh = {}
  local changed = false
  local q = 1
  while q <= #pending do
    local layer = layers[newest + 1]
    local space = layer.cap - count
    if space < 1 and newest + 1 < provided then
      -- Full: the keys left that it holds are repeats; grow only for one that is not.
      local rest = {}
      for r = q, #pending do rest[#rest + 1] = pending[r] end
      pending = absent_from(c, newest, rest)
      q = 1
      if #pending == 0 then break end
      local next_layer = layers[newest + 2]
      redis.call('SET', prefix .. 'bloom:' .. (newest + 1),
                 string.rep('\0', next_layer.blocks * 64), 'NX')
      redis.call('HSET', count_key, 'n' .. newest, count)
      newest = newest + 1
      count = 0
      changed = true
      layer = next_layer
      space = layer.cap
    end
    if space < 1 then space = #pending end
    local last = math.min(#pending, q + space - 1)
    local at = {}
    local start = starts[newest] + e
    for r = q, last do at[#at + 1] = pending[r] + start end
    local all = {}
    probe(prefix .. 'bloom:' .. newest, layer.bits, true, argv, at, all)
    for r = q, last do
      local base = pending[r]
      local was = all[r - q + 1]
      local new = not was
      if exact then
        if was then c.maybe = c.maybe + 1 end
        new = redis.call('HSETNX', prefix .. 'fp:' .. newest .. ':' .. argv[base + starts[newest]],
                         argv[base], '') == 1
        if was and new then c.fp = c.fp + 1 end
      end
      if new then
        local i = (base - head - 1) / stride + 1
        answer[i] = '1'
        count = count + 1
        fresh[#fresh + 1] = base
      end
    end
    q = last + 1
  end
  if changed or #fresh > 0 or c.maybe ~= maybe then
    redis.call('HSET', count_key, 'layers', newest + 1, 'count', count, 'maybe', c.maybe,
               'fp', c.fp)
  end
  return {answer = table.concat(answer), fresh = fresh, layers = newest + 1, count = count}, nil
end

local function insert(keys, argv)
  local count_key = keys[1]
  local prefix = string.sub(count_key, 1, -6)
  local exact = argv[1] == '1'
  local token, seq, claims, generation = argv[2], argv[3], argv[4], argv[5]
  local done_key, done = replayed(prefix, token, seq)
  if done then return done end
  local claim = claims ~= ''
  local r, err = test_and_set(count_key, exact, tonumber(argv[6]), claim, argv, 6)
  if not r then return err end
  local fresh = r.fresh
  local e = exact and 1 or 0
  if claim and #fresh > 0 then
    local list = prefix .. 'claims:' .. claims
    local j = 1
    while j <= #fresh do
      local last = math.min(#fresh, j + 4000)
      local items = {}
      for r2 = j, last do items[#items + 1] = generation .. ' ' .. argv[fresh[r2] + e] end
      redis.call('RPUSH', list, unpack(items))
      j = last + 1
    end
  end
  if done_key then redis.call('SET', done_key, seq .. '|' .. r.answer, 'EX', 300) end
  return {r.answer, r.layers, r.count}
end

-- Routed mode: the test-and-set of insert, and each new key's payload appended to the shard's
-- inbox stream (KEYS[2]), whose consumer group is created with it, before its first entry.
local function insert_routed(keys, argv)
  local count_key, inbox = keys[1], keys[2]
  local prefix = string.sub(count_key, 1, -6)
  local exact = argv[1] == '1'
  local token, seq, group = argv[2], argv[3], argv[4]
  local done_key, done = replayed(prefix, token, seq)
  if done then return done end
  -- Checked before any write: a failing XADD would leave keys seen and not queued.
  local inbox_type = redis.call('TYPE', inbox)['ok']
  if inbox_type ~= 'none' and inbox_type ~= 'stream' then
    return redis.error_reply('WRONGTYPE urlsieve: ' .. inbox .. ' holds a ' .. inbox_type ..
                             ', not an inbox stream')
  end
  local r, err = test_and_set(count_key, exact, tonumber(argv[5]), true, argv, 5)
  if not r then return err end
  local fresh = r.fresh
  if #fresh > 0 then
    if inbox_type == 'none' then
      redis.call('XGROUP', 'CREATE', inbox, group, '0', 'MKSTREAM')
    end
    local e = exact and 1 or 0
    for q = 1, #fresh do redis.call('XADD', inbox, '*', 'c', argv[fresh[q] + e]) end
  end
  if done_key then redis.call('SET', done_key, seq .. '|' .. r.answer, 'EX', 300) end
  return {r.answer, r.layers, r.count}
end

local function contains(keys, argv)
  local count_key = keys[1]
  local prefix = string.sub(count_key, 1, -6)
  local exact = argv[1] == '1'
  local provided = tonumber(argv[2])
  local nlayers, count, layers = shard_state(count_key)
  if not nlayers then
    return redis.error_reply('NOINIT urlsieve: shard ' .. count_key .. ' is not initialized')
  end
  if not provided or provided < 1 or provided > #layers then
    return redis.error_reply('ERR urlsieve: bad layer count')
  end
  if nlayers > provided then return stale(nlayers, count) end
  local starts, stride = arguments(layers, provided, exact, false)
  local nkeys = (#argv - 2) / stride
  if nkeys ~= math.floor(nkeys) then
    return redis.error_reply('ERR urlsieve: bad key arguments')
  end
  local c = {prefix = prefix, argv = argv, layers = layers, starts = starts, exact = exact,
             maybe = 0, fp = 0}
  local pending = {}
  for i = 1, nkeys do pending[i] = 3 + (i - 1) * stride end
  for l = 0, nlayers - 1 do pending = absent_from(c, l, pending) end
  local answer = {}
  for i = 1, nkeys do answer[i] = '1' end
  for q = 1, #pending do answer[(pending[q] - 3) / stride + 1] = '0' end
  return {table.concat(answer), nlayers, count}
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
redis.register_function('urlsieve_v1_insert_routed', insert_routed)
redis.register_function{function_name = 'urlsieve_v1_contains', callback = contains,
                        flags = {'no-writes'}}
)LUA";

std::string BuildSource() {
  std::string source =
      "#!lua name=urlsieve_v1\n-- urlsieve's RedisSeenSet (dedup/redis_seen_function.cc)\n";
  source += kBody;
  return source;
}

}  // namespace

const std::string& RedisSeenLibrarySource() {
  static const std::string source = BuildSource();
  return source;
}

}  // namespace urlsieve

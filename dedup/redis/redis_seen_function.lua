#!lua name=urlsieve_v2
-- urlsieve's RedisSeenSet (dedup/redis_seen_set.h): the Redis Function library it loads with
-- FUNCTION LOAD REPLACE. dedup/redis/redis_seen_function.h lists the functions and their arguments;
-- the build embeds this file (cmake/EmbedFile.cmake).
--
-- The client computes every bit offset and bucket (Lua numbers are doubles, and converting a
-- number to a string costs Lua a sprintf, several times what BITFIELD itself spends per bit): the
-- function moves strings from ARGV into BITFIELD calls and decides.
--
-- Arguments of insert: exact, token, seq, claim log, generation, P (the layers the client gives
-- offsets for), then per key: [its field (exact)] [its payload (claim log)] and for each layer
-- l < P: [its bucket in l (exact)] and its layer-l bit offsets (k_l of them). insert_routed:
-- exact, token, seq, group, P, then per key the same with its payload always. Contains: exact, P,
-- then per key the same without the payload.
--
-- A batch's keys are tested against every older layer (BITFIELD_RO GET, in calls of 10 bits: see
-- probe), then test-and-set in the newest (BITFIELD SET, 7 bits a call, returns the old bits: a
-- key whose bits were all set was there). In exact mode a
-- Bloom "maybe" in an older layer is confirmed by HEXISTS in that layer's bucket, and in the
-- newest layer HSETNX decides. When the newest layer holds its capacity and a key of the batch is
-- not in it, the function adds the next one (its string created at full size) before inserting
-- more: it inserts in chunks no larger than the room left, so a layer never passes its capacity,
-- and a batch of repeats never grows a shard. If the shard has more layers
-- than the client gave offsets for, or the batch might need more, it writes nothing and answers
-- "STALE <layers> <count>"; the client sends it again with more.
-- The counting variant's bits per BITFIELD call (Lua's unpack takes ≤ 8000 values).
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

-- Redis (script_lua.c) keeps the argument objects of a command a script calls for its first 32
-- arguments (LUA_CMD_OBJCACHE_SIZE) and reuses them on the next call; each argument past the 32nd
-- is allocated and freed per call. A BITFIELD of many bits thus cost ~40 ns per argument more
-- than the command itself, four arguments per bit: calls of at most 32 arguments (the command,
-- the key and 7 SETs, or 10 GETs) allocate none and took ~40 % less server CPU per key
-- (bench/redis_seen_server_cost.sh), although they are ~13 times as many.
local SET_OPS, GET_OPS = 7, 10
local set_args, get_args = {}, {}
for i = 1, SET_OPS do
  set_args[4 * i - 3] = 'SET'; set_args[4 * i - 2] = 'u1'; set_args[4 * i] = '1'
end
for i = 1, GET_OPS do get_args[3 * i - 2] = 'GET'; get_args[3 * i - 1] = 'u1' end

-- all[q] = whether every bit of the key whose layer offsets start at argv[at[q]] is set in
-- string `key` (before this call's writes when `set`). The bits go out in order, so a key twice
-- in a batch finds its bits set by the first.
local function probe(key, k, set, argv, at, all)
  local command, args, width, per = 'BITFIELD_RO', get_args, 3, GET_OPS
  if set then command, args, width, per = 'BITFIELD', set_args, 4, SET_OPS end
  local slot = set and 1 or 0  -- an op's offset is its (width · i - slot)th argument
  local old, m, n = {}, 0, 0
  for q = 1, #at do
    local a = at[q]
    for b = a, a + k - 1 do
      n = n + 1
      args[width * n - slot] = argv[b]
      if n == per then
        local r = redis.call(command, key, unpack(args, 1, width * n))
        for i = 1, n do old[m + i] = r[i] end
        m = m + n
        n = 0
      end
    end
  end
  if n > 0 then
    local r = redis.call(command, key, unpack(args, 1, width * n))
    for i = 1, n do old[m + i] = r[i] end
  end
  local pos = 1
  for q = 1, #at do
    local ok = true
    for _ = 1, k do
      if old[pos] == 0 then ok = false end
      pos = pos + 1
    end
    all[q] = ok
  end
end

-- The counting variant (a deletable set: 4-bit counters, BITFIELD u4, OVERFLOW SAT): all[q] =
-- whether every counter of the key is nonzero, or was raised earlier in this call (`bumped`, so a
-- key twice in a batch is new once, as with BITFIELD SET). With `insert`, a key not held gets
-- its counters raised by one (a saturated counter stays at 15).
local function probe_count(key, k, insert, argv, at, all, bumped)
  local per = math.max(1, math.floor(MAXOPS / k))
  local count = #at
  local j = 1
  while j <= count do
    local last = math.min(count, j + per - 1)
    local args, n = {}, 0
    for q = j, last do
      local a = at[q]
      for b = a, a + k - 1 do
        args[n + 1] = 'GET'; args[n + 2] = 'u4'; args[n + 3] = argv[b]
        n = n + 3
      end
    end
    local r = redis.call('BITFIELD_RO', key, unpack(args, 1, n))
    local incs, m = {'OVERFLOW', 'SAT'}, 2
    local pos = 1
    for q = j, last do
      local a = at[q]
      local ok = true
      for b = 0, k - 1 do
        if r[pos + b] == 0 and not (bumped and bumped[argv[a + b]]) then ok = false end
      end
      pos = pos + k
      all[q] = ok
      if insert and not ok then
        for b = a, a + k - 1 do
          incs[m + 1] = 'INCRBY'; incs[m + 2] = 'u4'; incs[m + 3] = argv[b]; incs[m + 4] = '1'
          m = m + 4
          bumped[argv[b]] = true
        end
      end
    end
    if m > 2 then redis.call('BITFIELD', key, unpack(incs, 1, m)) end
    j = last + 1
  end
end

-- Bits (unit 1) or counters (unit 4): test, or test-and-set.
local function probe_any(key, k, set, argv, at, all, unit, bumped)
  if unit == 4 then
    probe_count(key, k, set, argv, at, all, bumped)
  else
    probe(key, k, set, argv, at, all)
  end
end

-- Forgetting one key held in a counting layer: its counters (at argv[a .. a + k - 1]) are
-- decremented, except saturated ones (15: their true count is unknown, and decrementing one could
-- make another key a false negative). False when some counter is zero (the layer does not hold
-- it; nothing changes).
local function uncount(key, argv, a, k)
  local args = {}
  for b = a, a + k - 1 do
    args[#args + 1] = 'GET'; args[#args + 1] = 'u4'; args[#args + 1] = argv[b]
  end
  local r = redis.call('BITFIELD_RO', key, unpack(args))
  for b = 1, k do
    if r[b] == 0 then return false end
  end
  local decs = {'OVERFLOW', 'SAT'}
  for b = 1, k do
    if r[b] < 15 then
      decs[#decs + 1] = 'INCRBY'; decs[#decs + 1] = 'u4'; decs[#decs + 1] = argv[a + b - 1]
      decs[#decs + 1] = '-1'
    end
  end
  if #decs > 2 then redis.call('BITFIELD', key, unpack(decs)) end
  return true
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

-- The last value: whether layer 0's string is still to be made (the shard's first insert makes
-- it; see init).
local function shard_state(count_key)
  local state = redis.call('HMGET', count_key, 'layers', 'count', 'table', 'maybe', 'fp', 'unit',
                           'unmade')
  if not state[1] or not state[3] then return nil end
  return tonumber(state[1]), tonumber(state[2]), layers_of(state[3]), tonumber(state[4] or '0'),
         tonumber(state[5] or '0'), tonumber(state[6] or '1'), state[7] == '1'
end

-- A shard that lost data (docs/features/redis-seen-set.md, "A set that lost data"): the caller
-- stops, it never answers "new" for keys the set held.
local function lost(key, what)
  return redis.error_reply('LOST urlsieve: ' .. key .. ' ' .. what ..
                           ' (deleted, evicted, overwritten, or the server restarted without it)')
end

-- Error reply (LOST) unless `key` is a string of `want` bytes, the size it was made with: a
-- filter string deleted, evicted, or overwritten by another write.
local function check_string(key, want)
  local n = redis.pcall('STRLEN', key)
  if type(n) ~= 'number' then return lost(key, 'is no longer a string') end
  if n == 0 then return lost(key, 'is missing') end
  if n ~= want then return lost(key, 'holds ' .. n .. ' bytes, not its ' .. want) end
  return nil
end

-- Error reply unless each of the shard's `nlayers` layer strings holds its full size (layer 0
-- only once made: `unmade`).
local function check_layers(prefix, layers, nlayers, unit, unmade)
  for l = unmade and 1 or 0, nlayers - 1 do
    local err = check_string(prefix .. 'bloom:' .. l, layers[l + 1].blocks * 64 * unit)
    if err then return err end
  end
  return nil
end

-- The keys of `list` (key starts) not in the filter string `bloom` of geometry `layer`, whose
-- arguments start at `start` in a key's (exact: confirmed in the buckets `fp_prefix`<bucket>).
-- A key found is recorded in c.held (when set) as c.holding.
local function absent_in(c, bloom, fp_prefix, layer, start, list)
  local e = c.exact and 1 or 0
  local at = {}
  for q = 1, #list do at[q] = list[q] + start + e end
  local all = {}
  probe_any(bloom, layer.bits, false, c.argv, at, all, c.unit)
  local rest = {}
  for q = 1, #list do
    local found = all[q]
    if found and c.exact then
      local base = list[q]
      c.maybe = c.maybe + 1
      found = redis.call('HEXISTS', fp_prefix .. c.argv[base + start], c.argv[base]) == 1
      if not found then c.fp = c.fp + 1 end
    end
    if not found then
      rest[#rest + 1] = list[q]
    elseif c.held then
      c.held[list[q]] = c.holding
    end
  end
  return rest
end

-- The keys of `list` not in layer l of a layered shard.
local function absent_from(c, l, list)
  return absent_in(c, c.prefix .. 'bloom:' .. l, c.prefix .. 'fp:' .. l .. ':', c.layers[l + 1],
                   c.starts[l], list)
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

-- The head of every writing call: KEYS[1] the shard's count hash; ARGV exact, token, seq. Returns
-- the shard's key prefix, exact, seq, and the replay record (replayed), or in its place the
-- error reply to return: a token "<identity>/..." names the set its client opened, and a shard of
-- another identity is that set deleted and made again under the client.
local function writing_call(keys, argv)
  local prefix = string.sub(keys[1], 1, -6)
  local slash = string.find(argv[2], '/', 1, true)
  if slash then
    local identity = redis.call('HGET', keys[1], 'identity')
    if identity and identity ~= string.sub(argv[2], 1, slash - 1) then
      return prefix, false, argv[3], nil,
             redis.error_reply('IDENTITY urlsieve: ' .. keys[1] .. ' now belongs to set ' ..
                               identity .. ', not ' .. string.sub(argv[2], 1, slash - 1) ..
                               ': the set was deleted and made again')
    end
  end
  local done_key, done = replayed(prefix, argv[2], argv[3])
  return prefix, argv[1] == '1', argv[3], done_key, done
end

-- Keeps a call's answer under its token and sequence number for 300 s (replayed).
local function remember(done_key, seq, answer)
  if done_key then redis.call('SET', done_key, seq .. '|' .. answer, 'EX', 300) end
end

-- A crawl's claim log (ARGV claim log; "" none): "<generation> <payload>" appended per key told
-- new, its payload at argv[fresh[i] + e], in pushes of at most 4001 (Lua's unpack takes ≤ 8000).
local function log_claims(prefix, claims, generation, argv, fresh, e)
  if claims == '' or #fresh == 0 then return end
  local list = prefix .. 'claims:' .. claims
  local j = 1
  while j <= #fresh do
    local last = math.min(#fresh, j + 4000)
    local items = {}
    for r = j, last do items[#items + 1] = generation .. ' ' .. argv[fresh[r] + e] end
    redis.call('RPUSH', list, unpack(items))
    j = last + 1
  end
end

-- A layered shard's state, checked against the P (`provided`) layers a call gives offsets for:
-- the state (as shard_state), or nil and an error reply.
local function layered_state(count_key, provided)
  local nlayers, count, layers, maybe, fps, unit, unmade = shard_state(count_key)
  if not nlayers then
    return nil, redis.error_reply('NOINIT urlsieve: shard ' .. count_key .. ' is not initialized')
  end
  if not provided or provided < 1 or provided > #layers then
    return nil, redis.error_reply('ERR urlsieve: bad layer count')
  end
  if nlayers < 1 or nlayers > #layers or not count or count < 0 then
    return nil, lost(count_key, 'says ' .. nlayers .. ' layers and count ' .. tostring(count) ..
                     ' (its table has ' .. #layers .. ' layers)')
  end
  local err = check_layers(string.sub(count_key, 1, -6), layers, nlayers, unit, unmade)
  if err then return nil, err end
  return nlayers, count, layers, maybe, fps, unit, unmade
end

-- A layer string at its full size. SETRANGE at the last byte: Redis allocates the zeroed string
-- itself (string.rep builds it in Lua first, then SET copies it). Its pages are touched as it is
-- zeroed: ~0.6 ms for 175 KB on a virtual machine, so a shard's layer 0 is made by its first
-- insert, not when the set is made (a cluster's 1024 shards took 0.3 s to open).
local function make_layer(key, bytes)
  redis.call('DEL', key)
  redis.call('SETRANGE', key, bytes - 1, '\0')
end

-- The argument starts of a call's keys: key i's are at head + 1 + (i - 1) * stride.
local function key_starts(nkeys, head, stride)
  local starts = {}
  for i = 1, nkeys do starts[i] = head + 1 + (i - 1) * stride end
  return starts
end

-- The test-and-set of a batch in one shard (insert and insert_routed): the batch's key
-- arguments follow `head` leading arguments, each key's starting with [field (exact)]
-- [payload (with_payload)]. Returns nil and an error reply (nothing written), or a table:
-- answer (one character per key), fresh (the argument starts of the keys told new), layers,
-- count.
local function test_and_set(count_key, exact, provided, with_payload, argv, head)
  local prefix = string.sub(count_key, 1, -6)
  local nlayers, count, layers, maybe, fps, unit, unmade = layered_state(count_key, provided)
  if not nlayers then return nil, count end
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
             maybe = maybe, fp = fps, unit = unit}
  local bumped = {}
  local e = exact and 1 or 0
  local answer = {}
  for i = 1, nkeys do answer[i] = '0' end
  local pending = key_starts(nkeys, head, stride)
  local newest = nlayers - 1
  for l = 0, newest - 1 do pending = absent_from(c, l, pending) end
  local fresh = {}
  local changed = false
  if unmade and #pending > 0 then
    make_layer(prefix .. 'bloom:0', layers[1].blocks * 64 * unit)
    redis.call('HDEL', count_key, 'unmade')
  end
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
                 string.rep('\0', next_layer.blocks * 64 * unit), 'NX')
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
    probe_any(prefix .. 'bloom:' .. newest, layer.bits, true, argv, at, all, unit, bumped)
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

-- Routed mode: the test-and-set of insert, and each new key's payload appended to the shard's
-- inbox stream (KEYS[2]), whose consumer group is created with it, before its first entry.
local function insert_routed(keys, argv)
  local count_key, inbox, group = keys[1], keys[2], argv[4]
  local _, exact, seq, done_key, done = writing_call(keys, argv)
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
  remember(done_key, seq, r.answer)
  return {r.answer, r.layers, r.count}
end

local function contains(keys, argv)
  local count_key = keys[1]
  local prefix = string.sub(count_key, 1, -6)
  local exact = argv[1] == '1'
  local provided = tonumber(argv[2])
  local nlayers, count, layers, _, _, unit = layered_state(count_key, provided)
  if not nlayers then return count end
  if nlayers > provided then return stale(nlayers, count) end
  local starts, stride = arguments(layers, provided, exact, false)
  local nkeys = (#argv - 2) / stride
  if nkeys ~= math.floor(nkeys) then
    return redis.error_reply('ERR urlsieve: bad key arguments')
  end
  local c = {prefix = prefix, argv = argv, layers = layers, starts = starts, exact = exact,
             maybe = 0, fp = 0, unit = unit}
  local pending = key_starts(nkeys, 2, stride)
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
  -- Optional: ARGV[3] the unit (4: counters), ARGV[4], ARGV[5] a generational shard's generation
  -- length (ms) and count G. A generational shard has no layers: its generations' strings are
  -- made by the inserts that need them.
  local unit = tonumber(argv[3] or '1') or 1
  local span = tonumber(argv[4] or '0') or 0
  if span > 0 then
    redis.call('HSET', count_key, 'identity', argv[2], 'table', argv[1], 'layers', 1, 'count', 0,
               'maybe', 0, 'fp', 0, 'unit', unit, 'span', argv[4], 'gens', argv[5])
    return 'OK'
  end
  -- Layer 0's string is made by the shard's first insert (make_layer): until then the count hash
  -- says 'unmade', so that a missing string is told from a lost one.
  if unit ~= 1 then
    redis.call('HSET', count_key, 'identity', argv[2], 'table', argv[1], 'layers', 1, 'count', 0,
               'maybe', 0, 'fp', 0, 'unit', unit, 'unmade', 1)
  else
    redis.call('HSET', count_key, 'identity', argv[2], 'table', argv[1], 'layers', 1, 'count', 0,
               'maybe', 0, 'fp', 0, 'unmade', 1)
  end
  return 'OK'
end

-- The shard checked when a set that exists opens: ARGV identity, repair (0/1). NOINIT when its
-- count hash is missing (the caller initializes it only on request); an error when it belongs to
-- another set; LOST when a layer string lost data, or with repair = 1 the string made again
-- (empty) and its name in the reply "REPAIRED <key> ...". A generational shard's strings are
-- checked by its calls.
local function check(keys, argv)
  local count_key = keys[1]
  local prefix = string.sub(count_key, 1, -6)
  local identity = redis.call('HGET', count_key, 'identity')
  if not identity then
    return redis.error_reply('NOINIT urlsieve: shard ' .. count_key .. ' is not initialized')
  end
  if identity ~= argv[1] then
    return redis.error_reply('IDENTITY urlsieve: ' .. count_key .. ' belongs to set ' ..
                             identity .. ', not ' .. argv[1])
  end
  if redis.call('HEXISTS', count_key, 'span') == 1 then return 'OK' end
  local nlayers, count, layers, _, _, unit, unmade = shard_state(count_key)
  if not nlayers or nlayers < 1 or nlayers > #layers or not count then
    return lost(count_key, 'is not a readable shard state')
  end
  local repaired = {}
  for l = unmade and 1 or 0, nlayers - 1 do
    local key = prefix .. 'bloom:' .. l
    local want = layers[l + 1].blocks * 64 * unit
    local err = check_string(key, want)
    if err then
      if argv[2] ~= '1' then return err end
      redis.call('SET', key, string.rep('\0', want))
      repaired[#repaired + 1] = key
    end
  end
  if #repaired > 0 then return 'REPAIRED ' .. table.concat(repaired, ' ') end
  return 'OK'
end

-- Forgetting in a layered shard. ARGV: exact, token, seq, P, then per key its arguments (no
-- payload). Exact: the key's record is deleted from every layer's bucket (HDEL). Counting: the
-- lowest layer that holds the key is the one it was inserted into (a key goes into the newest
-- layer only when no older one holds it, and older layers only lose counts after that), and its
-- counters there are decremented. Replies [one character per key, '1' forgotten; layers; count].
local function forget(keys, argv)
  local count_key = keys[1]
  local prefix, exact, seq, done_key, done = writing_call(keys, argv)
  if done then return done end
  local provided = tonumber(argv[4])
  local nlayers, count, layers, _, _, unit = layered_state(count_key, provided)
  if not nlayers then return count end
  if nlayers > provided then return stale(nlayers, count) end
  if not exact and unit ~= 4 then
    return redis.error_reply('ERR urlsieve: ' .. count_key .. ' is a plain Bloom filter: it ' ..
                             'cannot forget')
  end
  local starts, stride = arguments(layers, provided, exact, false)
  local head = 4
  local nkeys = (#argv - head) / stride
  if nkeys ~= math.floor(nkeys) then
    return redis.error_reply('ERR urlsieve: bad key arguments')
  end
  local e = exact and 1 or 0
  local answer = {}
  for i = 1, nkeys do
    local base = head + 1 + (i - 1) * stride
    local gone = false
    for l = 0, nlayers - 1 do
      if exact then
        if redis.call('HDEL', prefix .. 'fp:' .. l .. ':' .. argv[base + starts[l]],
                      argv[base]) == 1 then
          gone = true
        end
      elseif uncount(prefix .. 'bloom:' .. l, argv, base + starts[l] + e, layers[l + 1].bits) then
        gone = true
        break
      end
    end
    answer[i] = gone and '1' or '0'
  end
  local r = table.concat(answer)
  remember(done_key, seq, r)
  return {r, nlayers, count}
end

-- Generational shards (a set with revisit_after): the shard's count hash holds the generation
-- geometry (its one-layer table), the generation length `span` (ms) and the count G. Generation
-- g covers [g·span, (g+1)·span) and lives until (g + G + 1)·span: the current one and the G
-- before it are live. Its keys, gen:<g> (the filter string, made at full size by the first
-- insert that needs it) and gen:<g>:fp:<B> (exact), expire by themselves then (PX, counted from
-- the call's time), so Redis frees them with no sweeper. The time is the call's `now` (unix ms),
-- or the server's TIME when the client sends "".
local function fmt(x) return string.format('%.0f', x) end

local function gen_now(text)
  if text ~= nil and text ~= '' then return tonumber(text) end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function gen_state(count_key)
  local s = redis.call('HMGET', count_key, 'table', 'maybe', 'fp', 'unit', 'span', 'gens')
  if not s[1] or not s[5] then return nil end
  return {layer = layers_of(s[1])[1], maybe = tonumber(s[2] or '0'), fp = tonumber(s[3] or '0'),
          unit = tonumber(s[4] or '1'), span = tonumber(s[5]), gens = tonumber(s[6])}
end

-- Error reply (LOST) when a live generation that took keys (its count in the count hash) lost
-- its string. The oldest live one is not checked: it expires next, by its writer's clock, which
-- may run ahead of this call's.
local function check_generations(count_key, st, cur)
  local fields = {}
  for g = cur - st.gens + 1, cur do fields[#fields + 1] = 'g' .. fmt(g) end
  local counts = redis.call('HMGET', count_key, unpack(fields))
  local prefix = string.sub(count_key, 1, -6)
  for i = 1, #fields do
    if tonumber(counts[i] or '0') > 0 then
      local err = check_string(prefix .. 'gen:' .. string.sub(fields[i], 2),
                               st.layer.blocks * 64 * st.unit)
      if err then return err end
    end
  end
  return nil
end

local function gen_noinit(count_key)
  return redis.error_reply('NOINIT urlsieve: generational shard ' .. count_key ..
                           ' is not initialized')
end

-- The test-and-set of a batch in a generational shard: a key held by a live generation is seen
-- (nothing is written: a sighting does not refresh it); any other goes into the current one.
-- Key arguments follow `head` leading ones: [field (exact)] [payload] [bucket (exact)] offsets.
-- Returns a table (answer: per key '1' new, else 'A' + the age of the generation holding it;
-- fresh; now; cur; count) or nil and an error.
local function gen_test_and_set(count_key, exact, with_payload, argv, head, now_text)
  local prefix = string.sub(count_key, 1, -6)
  local st = gen_state(count_key)
  if not st then return nil, gen_noinit(count_key) end
  local layer = st.layer
  local e = exact and 1 or 0
  local start = e + (with_payload and 1 or 0)
  local stride = start + e + layer.bits
  local nkeys = (#argv - head) / stride
  if nkeys ~= math.floor(nkeys) then
    return nil, redis.error_reply('ERR urlsieve: ' .. (#argv - head) ..
                                  ' key arguments in strides of ' .. stride)
  end
  local now = gen_now(now_text)
  local cur = math.floor(now / st.span)
  local err = check_generations(count_key, st, cur)
  if err then return nil, err end
  local c = {argv = argv, exact = exact, unit = st.unit, maybe = st.maybe, fp = st.fp, held = {}}
  local pending = key_starts(nkeys, head, stride)
  -- The live generations before the current one, and any after it: a client whose clock is
  -- behind another's (a clock given by the client) must not tell new a key that client put into
  -- a generation it does not know yet (its age then counts as 0).
  for g = cur - st.gens, cur + st.gens do
    local key = prefix .. 'gen:' .. fmt(g)
    if g ~= cur and #pending > 0 and redis.call('EXISTS', key) == 1 then
      c.holding = math.min(g, cur)
      pending = absent_in(c, key, key .. ':fp:', layer, start, pending)
    end
  end
  local key = prefix .. 'gen:' .. fmt(cur)
  local ttl = (cur + st.gens + 1) * st.span - now
  local fresh = {}
  local count = 0
  if #pending > 0 then
    if redis.call('EXISTS', key) == 0 then
      redis.call('SET', key, string.rep('\0', layer.blocks * 64 * st.unit), 'PX', fmt(ttl))
      -- Drop the counts of generations no longer live.
      local fields = redis.call('HKEYS', count_key)
      for f = 1, #fields do
        local g = string.match(fields[f], '^g(%d+)$')
        if g and tonumber(g) < cur - st.gens then redis.call('HDEL', count_key, fields[f]) end
      end
    end
    local at = {}
    for q = 1, #pending do at[q] = pending[q] + start + e end
    local all = {}
    probe_any(key, layer.bits, true, argv, at, all, st.unit, {})
    for q = 1, #pending do
      local base = pending[q]
      local was = all[q]
      local new = not was
      if exact then
        if was then c.maybe = c.maybe + 1 end
        local bucket = key .. ':fp:' .. argv[base + start]
        new = redis.call('HSETNX', bucket, argv[base], '') == 1
        if new then redis.call('PEXPIRE', bucket, fmt(ttl)) end
        if was and new then c.fp = c.fp + 1 end
      end
      if new then
        fresh[#fresh + 1] = base
      else
        c.held[base] = cur
      end
    end
    if #fresh > 0 then count = redis.call('HINCRBY', count_key, 'g' .. fmt(cur), #fresh) end
  end
  if c.maybe ~= st.maybe then
    redis.call('HSET', count_key, 'maybe', c.maybe, 'fp', c.fp)
  end
  local answer = {}
  for i = 1, nkeys do
    local base = head + 1 + (i - 1) * stride
    local g = c.held[base]
    if g then answer[i] = string.char(65 + cur - g) else answer[i] = '1' end
  end
  return {answer = fmt(now) .. ' ' .. fmt(cur) .. ' ' .. table.concat(answer), fresh = fresh,
          layers = 1, count = count}, nil
end

-- insert and insert_gen. ARGV: exact, token, seq, claim log ("" none), generation, then P
-- (insert; see test_and_set) or now (insert_gen: unix ms, "" the server's TIME), then per key its
-- arguments. The batch's test-and-set in a layered or a generational shard, then its claim log.
-- Replies [verdicts, layers (1 for a generational shard), count].
local function logged_insert(keys, argv, generational)
  local count_key, claims, generation = keys[1], argv[4], argv[5]
  local prefix, exact, seq, done_key, done = writing_call(keys, argv)
  if done then return done end
  local r, err
  if generational then
    r, err = gen_test_and_set(count_key, exact, claims ~= '', argv, 6, argv[6])
  else
    r, err = test_and_set(count_key, exact, tonumber(argv[6]), claims ~= '', argv, 6)
  end
  if not r then return err end
  log_claims(prefix, claims, generation, argv, r.fresh, exact and 1 or 0)
  remember(done_key, seq, r.answer)
  return {r.answer, r.layers, r.count}
end

local function insert(keys, argv) return logged_insert(keys, argv, false) end
-- A generational shard's answer is "<now> <cur> <per key: '1' new, 'A' + the age of the
-- generation holding it>".
local function insert_gen(keys, argv) return logged_insert(keys, argv, true) end

-- ARGV: exact, now, then per key [field] [bucket] offsets. Replies ['1' per key a live
-- generation holds, 1, 0]. No writes.
local function contains_gen(keys, argv)
  local count_key = keys[1]
  local prefix = string.sub(count_key, 1, -6)
  local exact = argv[1] == '1'
  local st = gen_state(count_key)
  if not st then return gen_noinit(count_key) end
  local e = exact and 1 or 0
  local stride = e + e + st.layer.bits
  local head = 2
  local nkeys = (#argv - head) / stride
  if nkeys ~= math.floor(nkeys) then
    return redis.error_reply('ERR urlsieve: bad key arguments')
  end
  local now = gen_now(argv[2])
  local cur = math.floor(now / st.span)
  local err = check_generations(count_key, st, cur)
  if err then return err end
  local c = {argv = argv, exact = exact, unit = st.unit, maybe = 0, fp = 0}
  local pending = key_starts(nkeys, head, stride)
  for g = cur - st.gens, cur + st.gens do
    local key = prefix .. 'gen:' .. fmt(g)
    if #pending > 0 and redis.call('EXISTS', key) == 1 then
      pending = absent_in(c, key, key .. ':fp:', st.layer, e, pending)
    end
  end
  local answer = {}
  for i = 1, nkeys do answer[i] = '1' end
  for q = 1, #pending do answer[(pending[q] - head - 1) / stride + 1] = '0' end
  return {table.concat(answer), 1, 0}
end

-- ARGV: exact, token, seq, now, then per key [field] [bucket] offsets. Exact: the key's record
-- is deleted from every live generation. Counting: the oldest live generation holding the key
-- is the one it went into (the same argument as forget's), and its counters there are
-- decremented. Replies ['1' per key forgotten, 1, 0].
local function forget_gen(keys, argv)
  local count_key = keys[1]
  local prefix, exact, seq, done_key, done = writing_call(keys, argv)
  if done then return done end
  local st = gen_state(count_key)
  if not st then return gen_noinit(count_key) end
  if not exact and st.unit ~= 4 then
    return redis.error_reply('ERR urlsieve: ' .. count_key .. ' is a plain Bloom filter: it ' ..
                             'cannot forget')
  end
  local e = exact and 1 or 0
  local stride = e + e + st.layer.bits
  local head = 4
  local nkeys = (#argv - head) / stride
  if nkeys ~= math.floor(nkeys) then
    return redis.error_reply('ERR urlsieve: bad key arguments')
  end
  local now = gen_now(argv[4])
  local cur = math.floor(now / st.span)
  local err = check_generations(count_key, st, cur)
  if err then return err end
  local answer = {}
  for i = 1, nkeys do
    local base = head + 1 + (i - 1) * stride
    local gone = false
    for g = cur - st.gens, cur + st.gens do
      local key = prefix .. 'gen:' .. fmt(g)
      if redis.call('EXISTS', key) == 1 then
        if exact then
          if redis.call('HDEL', key .. ':fp:' .. argv[base + e], argv[base]) == 1 then
            gone = true
          end
        elseif uncount(key, argv, base + e, st.layer.bits) then
          gone = true
          break
        end
      end
    end
    answer[i] = gone and '1' or '0'
  end
  local r = table.concat(answer)
  remember(done_key, seq, r)
  return {r, 1, 0}
end

local function create(keys, argv)
  if redis.call('EXISTS', keys[1]) == 0 then redis.call('HSET', keys[1], unpack(argv)) end
  return redis.call('HGETALL', keys[1])
end

redis.register_function('urlsieve_v2_create', create)
redis.register_function('urlsieve_v2_init', init)
redis.register_function('urlsieve_v2_check', check)
redis.register_function('urlsieve_v2_insert', insert)
redis.register_function('urlsieve_v2_insert_routed', insert_routed)
redis.register_function{function_name = 'urlsieve_v2_contains', callback = contains,
                        flags = {'no-writes'}}
redis.register_function('urlsieve_v2_forget', forget)
redis.register_function('urlsieve_v2_insert_gen', insert_gen)
redis.register_function{function_name = 'urlsieve_v2_contains_gen', callback = contains_gen,
                        flags = {'no-writes'}}
redis.register_function('urlsieve_v2_forget_gen', forget_gen)

#!lua name=urlsieve_content_v1
-- urlsieve's RedisContentSeenSet (dedup/content/redis_content_seen_set.h): the Redis Function
-- library it loads with FUNCTION LOAD REPLACE. The build embeds this file (cmake/EmbedFile.cmake).
-- docs/features/content-seen.md, "Shared" describes the layout; in short, every key of a set is
-- "urlsieve:{NAME:content}:..." (one Redis Cluster slot), KEYS[1] is its meta hash and the others
-- are named from it:
--   meta        hash: format, version, identity, max_distance, near, pages, chunk, coff, epoch
--   x:HH        hash: the exact buckets, field LL for bucket HHLL (the digest's top 16 bits, hex):
--               12-byte entries, the digest's low 48 bits then the value (48 bits, big-endian)
--   n:J:HH      hash: near table J's buckets, four to a field: bucket HHLL is sub-bucket LL % 4 of
--               field floor(LL / 4) (2 hex digits). A field is 4 entry counts (2 bytes each,
--               big-endian) then the 4 sub-buckets' entries: the fingerprint's other bits (the
--               client's encoding, R_J bytes), table 0's followed by the value (6 bytes)
-- A bucket is a hash field (the near ones a quarter of one), not a key: a field costs Redis about
-- 48 bytes, a key about 80; at 10^6 pages, 65536 fields per near table would cost 13 bytes a
-- page, a third of the near index.
--   c:N         copy chunk N: a string of CHUNK bytes made at full size; records are
--               [id length (2 bytes)][data length (2 bytes)][id][data]; value = N * 65536 + offset
--   done:TOKEN  the last answer of one client connection, "<seq>|<msgpack>", 300 s
-- Buckets are written whole (HSET), never grown in place: APPEND and SETRANGE double a string's
-- allocation below 1 MiB (Redis's sds growth), a whole value is allocated at its size.
--
-- The near lookup is the client's: it reads the epoch (HGET meta epoch) and the k+1 buckets of the
-- query (GET), computes the Hamming distances, and sends the fingerprints at the smallest distance
-- (the claims, each as its table-0 bucket and entry) with the epoch and the lengths it read. Buckets
-- only grow between Forgets, and each Forget that touches the near tables bumps the epoch, so an
-- unchanged epoch and unchanged lengths mean the buckets hold what the client read: the function
-- then decides on the client's reading, atomically. Otherwise it answers {'A'} (again), writing
-- nothing, and the client reads again.

local CHUNK = 65520  -- + sds header and NUL: one 64 KiB jemalloc class
local DONE_MS = 300000

local function prefix_of(meta)
  return string.sub(meta, 1, #meta - 4)  -- "...:meta" -> "...:"
end

-- The 1-based position of `needle` in `s` at an entry boundary (entries of `width` bytes), from
-- entry boundary `init`.
local function find_aligned(s, needle, width, init)
  local at = init or 1
  while true do
    local pos = string.find(s, needle, at, true)
    if not pos then return nil end
    if (pos - 1) % width == 0 then return pos end
    at = pos + 1
  end
end

local function decode48(s, pos)
  local a, b, c, d, e, f = string.byte(s, pos, pos + 5)
  return ((((a * 256 + b) * 256 + c) * 256 + d) * 256 + e) * 256 + f
end

local function encode48(v)
  local bytes = {}
  for i = 6, 1, -1 do
    bytes[i] = v % 256
    v = math.floor(v / 256)
  end
  return string.char(unpack(bytes))
end

-- A bucket "HHLL" of the hash family `family` ("x:", "n:J:"): {key, field}.
local function bucket(prefix, family, hex)
  return {prefix .. family .. string.sub(hex, 1, 2), string.sub(hex, 3, 4)}
end

local function get(b)
  local s = redis.call('HGET', b[1], b[2])
  if not s then return '' end
  return s
end

local function put(b, s)
  if #s == 0 then redis.call('HDEL', b[1], b[2]) else redis.call('HSET', b[1], b[2], s) end
end

-- Near bucket "HHLL" of table j: {key, field, sub-bucket (0..3)}.
local function near_bucket(prefix, j, hex)
  local low = tonumber(string.sub(hex, 3, 4), 16)
  return {prefix .. 'n:' .. j .. ':' .. string.sub(hex, 1, 2),
          string.format('%02x', math.floor(low / 4)), low % 4}
end

local EMPTY_FIELD = '\0\0\0\0\0\0\0\0'

-- The sub-bucket `sub` of field value `s` (entries of `width` bytes): its first byte (1-based), one
-- past its last, and the field's 4 counts.
local function region(s, sub, width)
  if #s < 8 then s = EMPTY_FIELD end
  local counts = {}
  local start = 9
  for q = 0, 3 do
    local hi, lo = string.byte(s, 2 * q + 1, 2 * q + 2)
    counts[q] = hi * 256 + lo
    if q < sub then start = start + counts[q] * width end
  end
  return start, start + counts[sub] * width, counts
end

local function header(counts)
  local out = {}
  for q = 0, 3 do
    out[#out + 1] = string.char(math.floor(counts[q] / 256), counts[q] % 256)
  end
  return table.concat(out)
end

-- The position of `needle` at an entry boundary of the sub-bucket [first, stop).
local function find_in(s, needle, width, first, stop)
  local at = first
  while at < stop do
    local pos = string.find(s, needle, at, true)
    if not pos or pos >= stop then return nil end
    if (pos - first) % width == 0 then return pos end
    at = pos + 1
  end
  return nil
end

-- `s` with `entry` appended to sub-bucket `sub`.
local function near_insert(s, sub, entry)
  if #s < 8 then s = EMPTY_FIELD end
  local _, stop, counts = region(s, sub, #entry)
  counts[sub] = counts[sub] + 1
  return header(counts) .. string.sub(s, 9, stop - 1) .. entry .. string.sub(s, stop)
end

-- `s` without the entry of `width` bytes at `pos` of sub-bucket `sub` ('' when none is left).
local function near_remove(s, sub, pos, width, counts)
  counts[sub] = counts[sub] - 1
  if counts[0] + counts[1] + counts[2] + counts[3] == 0 then return '' end
  return header(counts) .. string.sub(s, 9, pos - 1) .. string.sub(s, pos + width)
end

local function read_copy(prefix, v)
  local chunk = math.floor(v / 65536)
  local off = v % 65536
  local key = prefix .. 'c:' .. chunk
  -- Most records are shorter than 512 bytes: one GETRANGE, a second for a longer one.
  local r = redis.call('GETRANGE', key, off, off + 511)
  if #r < 4 then
    return redis.error_reply('LOST urlsieve: ' .. key .. ' has no copy at offset ' .. off ..
                             ' (the key was deleted or evicted)')
  end
  local a, b, c, d = string.byte(r, 1, 4)
  local idlen = a * 256 + b
  local total = 4 + idlen + c * 256 + d
  if total > #r then r = redis.call('GETRANGE', key, off, off + total - 1) end
  if #r < total or idlen == 0 then
    return redis.error_reply('LOST urlsieve: ' .. key .. ' has a damaged copy at offset ' .. off)
  end
  return {string.sub(r, 5, 4 + idlen), string.sub(r, 5 + idlen, total)}
end

-- Stores the copy (id, data) and counts the page; its value.
local function store_copy(meta, prefix, state, id, data)
  local chunk = tonumber(state[4]) or 0
  local coff = tonumber(state[5]) or 0
  local rec = string.char(math.floor(#id / 256), #id % 256, math.floor(#data / 256), #data % 256) ..
              id .. data
  if coff + #rec > CHUNK then
    chunk = chunk + 1
    coff = 0
  end
  local key = prefix .. 'c:' .. chunk
  if coff == 0 then redis.call('SET', key, string.rep('\0', CHUNK)) end
  redis.call('SETRANGE', key, coff, rec)
  redis.call('HSET', meta, 'chunk', chunk, 'coff', coff + #rec, 'pages', (tonumber(state[2]) or 0) + 1)
  return chunk * 65536 + coff
end

-- The meta's {identity, pages, epoch, chunk, coff}, or an error reply.
local function read_state(meta, identity)
  local state = redis.call('HMGET', meta, 'identity', 'pages', 'epoch', 'chunk', 'coff')
  local stored = state[1]
  if not stored then
    return redis.error_reply('NOINIT urlsieve: ' .. meta .. ' is missing: the content set was ' ..
                             'deleted or lost')
  end
  if stored ~= identity then
    return redis.error_reply('IDENTITY urlsieve: ' .. meta .. ' is another set (made again ' ..
                             'since this process opened it)')
  end
  return state
end

local function replay(prefix, token, seq)
  if token == '' then return nil end
  local d = redis.call('GET', prefix .. 'done:' .. token)
  if not d then return nil end
  local sep = string.find(d, '|', 1, true)
  if sep and string.sub(d, 1, sep - 1) == seq then
    return cmsgpack.unpack(string.sub(d, sep + 1))
  end
  return nil
end

local function remember(prefix, token, seq, reply)
  if token == '' then return reply end
  redis.call('SET', prefix .. 'done:' .. token, seq .. '|' .. cmsgpack.pack(reply), 'PX', DONE_MS)
  return reply
end

-- create. KEYS: meta. ARGV: field, value, ... The meta hash unless it exists; HGETALL.
local function create(keys, args)
  if redis.call('EXISTS', keys[1]) == 0 then redis.call('HSET', keys[1], unpack(args)) end
  return redis.call('HGETALL', keys[1])
end

-- test. KEYS: meta. ARGV: identity, token, seq, exact bucket, digest's low 48 bits (6 bytes), id,
-- data, near (0/1); with near 1: epoch read, T, T x [bucket, entry, length read], C,
-- C x [table-0 bucket, table-0 entry, distance].
-- Reply: {kind ('F', 'E', 'N', 'A' = read again), refetch (0/1), distance, id, data, pages}.
local function test(keys, args)
  local meta = keys[1]
  local prefix = prefix_of(meta)
  local token, seq = args[2], args[3]
  local done = replay(prefix, token, seq)
  if done then return done end
  local state = read_state(meta, args[1])
  if state.err then return state end
  local id, data = args[6], args[7]
  local pages = tonumber(state[2]) or 0

  local xb = bucket(prefix, 'x:', args[4])
  local xs = get(xb)
  local pos = find_aligned(xs, args[5], 12)
  if pos then
    local copy = read_copy(prefix, decode48(xs, pos + 6))
    if copy.err then return copy end
    if copy[1] == id then return remember(prefix, token, seq, {'F', 1, 0, copy[1], copy[2], pages}) end
    return remember(prefix, token, seq, {'E', 0, 0, copy[1], copy[2], pages})
  end

  local near = args[8] == '1'
  local tables = {}
  if near then
    if (state[3] or '0') ~= args[9] then return {'A'} end
    local t = tonumber(args[10])
    local at = 11
    for j = 0, t - 1 do
      local b = near_bucket(prefix, j, args[at])
      local s = get(b)
      if #s ~= tonumber(args[at + 2]) then return {'A'} end
      tables[#tables + 1] = {b, args[at + 1], s}
      at = at + 3
    end
    local claims = tonumber(args[at])
    at = at + 1
    local best, distance = nil, 0
    for _ = 1, claims do
      local entry = args[at + 1]
      local b = near_bucket(prefix, 0, args[at])
      local s = get(b)
      local first, stop = region(s, b[3], #entry + 6)
      local p = find_in(s, entry, #entry + 6, first, stop)
      if not p then return {'A'} end
      local v = decode48(s, p + #entry)
      if not best or v < best then
        best = v
        distance = tonumber(args[at + 2])
      end
      at = at + 3
    end
    if best then
      local copy = read_copy(prefix, best)
      if copy.err then return copy end
      if copy[1] == id then
        return remember(prefix, token, seq, {'F', 1, distance, copy[1], copy[2], pages})
      end
      local v = store_copy(meta, prefix, state, id, data)
      put(xb, xs .. args[5] .. encode48(v))
      return remember(prefix, token, seq, {'N', 0, distance, copy[1], copy[2], pages + 1})
    end
  end

  local v = store_copy(meta, prefix, state, id, data)
  put(xb, xs .. args[5] .. encode48(v))
  for j, tb in ipairs(tables) do
    local entry = tb[2]
    if j == 1 then entry = entry .. encode48(v) end
    put(tb[1], near_insert(tb[3], tb[1][3], entry))
  end
  return remember(prefix, token, seq, {'F', 0, 0, '', '', pages + 1})
end

-- forget. KEYS: meta. ARGV: identity, token, seq, exact bucket, digest's low 48 bits, id, near
-- (0/1); with near 1: T, T x [bucket, entry]. Removes the digest's entry and the fingerprint's
-- entries whose copy is `id`'s. Reply: {1 when something was removed else 0, pages}.
local function forget(keys, args)
  local meta = keys[1]
  local prefix = prefix_of(meta)
  local token, seq = args[2], args[3]
  local done = replay(prefix, token, seq)
  if done then return done end
  local state = read_state(meta, args[1])
  if state.err then return state end
  local id = args[6]
  local removed = 0

  local xb = bucket(prefix, 'x:', args[4])
  local xs = get(xb)
  local pos = find_aligned(xs, args[5], 12)
  if pos then
    local copy = read_copy(prefix, decode48(xs, pos + 6))
    if copy.err then return copy end
    if copy[1] == id then
      put(xb, string.sub(xs, 1, pos - 1) .. string.sub(xs, pos + 12))
      redis.call('HINCRBY', meta, 'pages', -1)
      removed = 1
    end
  end

  if args[7] == '1' then
    local t = tonumber(args[8])
    local b0 = near_bucket(prefix, 0, args[9])
    local entry0 = args[10]
    local width = #entry0 + 6
    local s = get(b0)
    local first, stop, counts = region(s, b0[3], width)
    local p = find_in(s, entry0, width, first, stop)
    while p do
      local copy = read_copy(prefix, decode48(s, p + #entry0))
      if copy.err then return copy end
      if copy[1] == id then break end
      p = find_in(s, entry0, width, p + width, stop)
    end
    if p then
      put(b0, near_remove(s, b0[3], p, width, counts))
      local at = 11
      for j = 1, t - 1 do
        local b = near_bucket(prefix, j, args[at])
        local entry = args[at + 1]
        local sj = get(b)
        local fj, sj_stop, cj = region(sj, b[3], #entry)
        local q = find_in(sj, entry, #entry, fj, sj_stop)
        if q then put(b, near_remove(sj, b[3], q, #entry, cj)) end
        at = at + 2
      end
      redis.call('HINCRBY', meta, 'epoch', 1)
      removed = 1
    end
  end
  local pages = tonumber(redis.call('HGET', meta, 'pages')) or 0
  return remember(prefix, token, seq, {removed, pages})
end

redis.register_function('urlsieve_content_v1_create', create)
redis.register_function('urlsieve_content_v1_test', test)
redis.register_function('urlsieve_content_v1_forget', forget)

#!lua name=urlsieve_cluster_v2
-- urlsieve's crawl cluster: the Redis Function library ClusterCoordinator loads with FUNCTION
-- LOAD REPLACE. crawler/cluster/cluster_function.h lists the functions and their arguments; the build
-- embeds this file (cmake/EmbedFile.cmake).
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- "urlsieve:{NAME}:cluster" -> "urlsieve:{NAME}:"
local function cluster_prefix(meta)
  return string.sub(meta, 1, -8)
end

local function register(keys, argv)
  local meta, nodes, node = keys[1], keys[2], keys[3]
  local now = now_ms()
  local created = 0
  if redis.call('EXISTS', meta) == 0 then
    redis.call('HSET', meta, 'format', argv[4], 'version', argv[5], 'identity', argv[1],
               'partitions', argv[2], 'settings', argv[3], 'seeded', '0', 'created_ms', now)
    created = 1
  else
    local m = redis.call('HMGET', meta, 'partitions', 'settings', 'format', 'identity')
    if m[1] ~= argv[2] or m[2] ~= argv[3] or m[3] ~= argv[4] or not m[4] then
      return redis.error_reply('MISMATCH urlsieve: ' .. meta .. ' differs')
    end
  end
  local id, token = argv[6], argv[7]
  local expiry = redis.call('ZSCORE', nodes, id)
  if expiry and tonumber(expiry) > now then
    local other = redis.call('HMGET', node, 'token', 'host', 'pid')
    if other[1] ~= token and (argv[11] == '' or other[1] ~= argv[11]) then
      return redis.error_reply('LIVE ' .. (tonumber(expiry) - now) .. ' ' ..
                               tostring(other[2]) .. ' ' .. tostring(other[3]) .. ' ' ..
                               tostring(other[1]))
    end
  end
  redis.call('HSET', node, 'token', token, 'host', argv[8], 'pid', argv[9], 'state', 'running',
             'joined_ms', now, 'beat_ms', now, 'idle', '0')
  -- A new instance: a new tenure, so that no lease value of an earlier one is taken for its own.
  redis.call('HINCRBY', node, 'tenure', 1)
  redis.call('ZADD', nodes, now + tonumber(argv[10]), id)
  local m = redis.call('HMGET', meta, 'identity', 'recrawl_round', 'recrawl_revisit_s')
  return {created, m[1], m[2] or '0', m[3] or '0'}
end

local function check_identity(meta, identity)
  local stored = redis.call('HGET', meta, 'identity')
  if stored ~= identity then
    return redis.error_reply('STATELOST urlsieve: ' .. meta .. ' is ' ..
                             (stored and ('of cluster ' .. stored) or 'missing'))
  end
  return nil
end

local function heartbeat(keys, argv)
  local meta, nodes, node = keys[1], keys[2], keys[3]
  local lost = check_identity(meta, argv[1])
  if lost then return lost end
  local token = redis.call('HGET', node, 'token')
  if not token then
    return redis.error_reply('STATELOST urlsieve: ' .. node .. ' is missing')
  end
  if token ~= argv[3] then
    local other = redis.call('HMGET', node, 'host', 'pid')
    return redis.error_reply('TAKEN ' .. tostring(other[1]) .. ' ' .. tostring(other[2]))
  end
  local now = now_ms()
  -- A node whose expiry passed may have been judged dead by another, which may take its leases:
  -- its tenure ends here, and every lease value of the old tenure is no longer its own.
  local expiry = redis.call('ZSCORE', nodes, argv[2])
  if not expiry or tonumber(expiry) <= now then redis.call('HINCRBY', node, 'tenure', 1) end
  redis.call('HSET', node, 'state', argv[5], 'pages', argv[6], 'errors', argv[7],
             'links_new', argv[8], 'beat_ms', now, 'idle', argv[9], 'appended', argv[10],
             'appended_to', argv[11])
  redis.call('ZADD', nodes, now + tonumber(argv[4]), argv[2])
  local m = redis.call('HMGET', meta, 'seeded', 'recrawl_round', 'recrawl_revisit_s')
  local out = {now, m[1] or '0', m[2] or '0', m[3] or '0'}
  local prefix = cluster_prefix(meta) .. 'node:'
  local all = redis.call('ZRANGE', nodes, 0, -1, 'WITHSCORES')
  for i = 1, #all, 2 do
    local h = redis.call('HMGET', prefix .. all[i], 'state', 'pages', 'errors', 'links_new',
                         'host', 'pid', 'beat_ms', 'token', 'tenure', 'idle', 'appended',
                         'appended_to')
    out[#out + 1] = all[i]
    out[#out + 1] = all[i + 1]
    for j = 1, 12 do out[#out + 1] = h[j] or '' end
  end
  return out
end

local function seed(keys, argv)
  local lost = check_identity(keys[1], argv[1])
  if lost then return lost end
  redis.call('HSET', keys[1], 'seeded', '1')
  return 1
end

-- A re-crawl round (docs/features/cluster.md, "Re-crawl"): every partition's owner scans its
-- fetch records once for the round (rescan) and queues the due ones in its inbox.
local function recrawl(keys, argv)
  local lost = check_identity(keys[1], argv[1])
  if lost then return lost end
  redis.call('HSET', keys[1], 'recrawl_revisit_s', argv[2])
  return redis.call('HINCRBY', keys[1], 'recrawl_round', 1)
end

-- A lease has no TTL: it is the holder's while the holder's heartbeat lives (the nodes' expiries
-- are on another master, so the caller judges that, from its heartbeat, and names the value it
-- found stale as `expected`).
local function acquire(keys, argv)
  local value = redis.call('GET', keys[1])
  if value == argv[1] then return {1} end
  if not value or (argv[2] ~= '' and value == argv[2]) then
    redis.call('SET', keys[1], argv[1])
    return {1}
  end
  return {0, value, redis.call('PTTL', keys[1])}
end

local function release(keys, argv)
  if redis.call('GET', keys[1]) ~= argv[1] then return 0 end
  if tonumber(argv[2]) > 0 then
    redis.call('SET', keys[1], 'released', 'PX', argv[2])
  else
    redis.call('DEL', keys[1])
  end
  return 1
end

-- Calls a stream command; on NOGROUP creates the group (reading from 0) and calls it again.
local function with_group(inbox, group, ...)
  local r = redis.pcall(...)
  if type(r) == 'table' and r.err then
    if string.find(r.err, 'NOGROUP', 1, true) then
      redis.call('XGROUP', 'CREATE', inbox, group, '0')
      return redis.call(...)
    end
    return redis.error_reply(r.err)
  end
  return r
end

local function payload_of(fields)
  if type(fields) ~= 'table' then return nil end
  for i = 1, #fields, 2 do
    if fields[i] == 'c' then return fields[i + 1] end
  end
  return ''
end

local function read(keys, argv)
  local lease, inbox = keys[1], keys[2]
  local value = redis.call('GET', lease)
  if value ~= argv[1] then return {'LOST', value or ''} end
  local group, consumer, count, cursor = argv[2], argv[3], tonumber(argv[4]), argv[5]
  local out = {'OK', ''}
  if redis.call('EXISTS', inbox) == 0 then return out end
  if cursor ~= '' then
    local r = with_group(inbox, group, 'XAUTOCLAIM', inbox, group, consumer, 0, cursor,
                         'COUNT', count)
    if r.err then return r end
    for _, e in ipairs(r[2]) do
      local payload = payload_of(e[2])
      if payload then
        out[#out + 1] = e[1]
        out[#out + 1] = payload
      end
    end
    if r[1] ~= '0-0' then
      out[2] = r[1]
      return out
    end
    count = count - (#out - 2) / 2
  end
  if count > 0 then
    local r = with_group(inbox, group, 'XREADGROUP', 'GROUP', group, consumer, 'COUNT', count,
                         'STREAMS', inbox, '>')
    if type(r) == 'table' and r.err then return r end
    if r and r[1] then
      for _, e in ipairs(r[1][2]) do
        out[#out + 1] = e[1]
        out[#out + 1] = payload_of(e[2]) or ''
      end
    end
  end
  return out
end

-- A fetch record's value: a flag ('-' stored, 'q' queued for a re-fetch) and the record's text
-- (crawler/state/fetch_record_text.h: "<fetch_time> <interval_s> ..." first).
local function ack(keys, argv)
  local inbox, records = keys[1], keys[2]
  local ids = tonumber(argv[2])
  local n = redis.pcall('XACK', inbox, argv[1], unpack(argv, 3, 2 + ids))
  if type(n) == 'table' then n = 0 end
  redis.call('XDEL', inbox, unpack(argv, 3, 2 + ids))
  for i = 3 + ids, #argv, 2 do
    local url, text = argv[i], argv[i + 1]
    if text ~= '' then
      redis.call('HSET', records, url, '-' .. text)
    else
      local value = redis.call('HGET', records, url)
      if value and string.sub(value, 1, 1) == 'q' then
        redis.call('HSET', records, url, '-' .. string.sub(value, 2))
      end
    end
  end
  return n
end

local function rescan(keys, argv)
  local lease, inbox, records, scanned = keys[1], keys[2], keys[3], keys[4]
  if redis.call('GET', lease) ~= argv[1] then return {'LOST', 0} end
  local round = tonumber(argv[2])
  if tonumber(redis.call('GET', scanned) or '0') >= round then return {'DONE', 0} end
  local now, revisit = tonumber(argv[3]), tonumber(argv[4])
  local r = redis.call('HSCAN', records, argv[6], 'COUNT', argv[5])
  local queued = 0
  local pairs_ = r[2]
  for i = 1, #pairs_, 2 do
    local url, value = pairs_[i], pairs_[i + 1]
    if string.sub(value, 1, 1) == '-' then
      local fetched, interval = string.match(value, '^.(%d+) (%d+) ')
      fetched, interval = tonumber(fetched), tonumber(interval)
      if interval == 0 then interval = revisit end
      if fetched and (revisit == 0 or fetched + interval <= now) then
        local text = string.sub(value, 2)
        redis.call('HSET', records, url, 'q' .. text)
        redis.call('XADD', inbox, '*', 'c', 'R ' .. url .. '\n' .. text)
        queued = queued + 1
      end
    end
  end
  if r[1] == '0' then
    redis.call('SET', scanned, round)
    return {'DONE', queued}
  end
  return {r[1], queued}
end

local function probe(keys, argv)
  local scanned = tonumber(redis.call('GET', keys[2]) or '0')
  if redis.call('EXISTS', keys[1]) == 0 then return {0, 0, 0, scanned} end
  local info = redis.call('XINFO', 'STREAM', keys[1])
  local added = 0
  for i = 1, #info, 2 do
    if info[i] == 'entries-added' then added = info[i + 1] end
  end
  local pending = 0
  local p = redis.pcall('XPENDING', keys[1], argv[1])
  if type(p) == 'table' and not p.err then pending = p[1] end
  return {redis.call('XLEN', keys[1]), added, pending, scanned}
end

redis.register_function('urlsieve_cluster_v2_register', register)
redis.register_function('urlsieve_cluster_v2_heartbeat', heartbeat)
redis.register_function('urlsieve_cluster_v2_seed', seed)
redis.register_function('urlsieve_cluster_v2_recrawl', recrawl)
redis.register_function('urlsieve_cluster_v2_rescan', rescan)
redis.register_function('urlsieve_cluster_v2_acquire', acquire)
redis.register_function('urlsieve_cluster_v2_release', release)
redis.register_function('urlsieve_cluster_v2_read', read)
redis.register_function('urlsieve_cluster_v2_ack', ack)
redis.register_function{function_name = 'urlsieve_cluster_v2_probe', callback = probe,
                        flags = {'no-writes'}}

#!/usr/bin/env python3
"""Inputs of bench/redis_seen_server_cost.sh: the ways a Redis seen set can test-and-set a key,
each as a Redis pipeline (RESP, to stdout) of batches of 512 random keys, each key k = 10 bits in
one 64-byte block of a 1 MiB string (the layout of dedup/redis/redis_seen_layout.h at 10^6 keys,
epsilon = 1e-3), so that the script can measure the server's CPU per key of each.

  redis_seen_server_cost.py lua VARIANT            the variant's Lua script (none: "return 1")
  redis_seen_server_cost.py resp VARIANT SHA N     N batches, the script's SHA1 for EVALSHA

Variants:
  sadd      SADD of a 40-hex SHA-1 per key (scrapy-redis), one command per key
  bitfield  one plain BITFIELD SET u1 per batch, no Lua: the floor of the k-bits-per-key layout
  function  the Function's way (redis_seen_function.lua, probe): the client sends the k offsets
            as decimal strings; Lua builds SET u1 arguments and calls BITFIELD per 7 bits, so
            that a call has at most 32 arguments (Redis reuses their objects)
  wide      the same, one BITFIELD per 180 keys (the Function before issue 27): each argument
            past the 32nd is allocated and freed per call
  block     Lua reads each key's 64-byte block (GETRANGE), tests its bits in Lua, and writes the
            block back (SETRANGE) when the key is new: 3 arguments per key instead of k, but two
            Redis calls per new key
"""
import random
import sys

BATCH = 512
BLOCKS = 16383  # 1 MiB of 64-byte blocks
K = 10

LUA = {
    "function": r"""
local key, k = KEYS[1], 10
local args = {}
for i = 1, 7 do args[4 * i - 3] = 'SET'; args[4 * i - 2] = 'u1'; args[4 * i] = '1' end
local old, m, n = {}, 0, 0
for b = 1, #ARGV do
  n = n + 1
  args[4 * n - 1] = ARGV[b]
  if n == 7 or b == #ARGV then
    local r = redis.call('BITFIELD', key, unpack(args, 1, 4 * n))
    for i = 1, n do old[m + i] = r[i] end
    m = m + n
    n = 0
  end
end
local answer = {}
for q = 1, #ARGV / k do
  local was = true
  for b = (q - 1) * k + 1, q * k do
    if old[b] == 0 then was = false end
  end
  answer[q] = was and '0' or '1'
end
return table.concat(answer)
""",
    "wide": r"""
local key, k = KEYS[1], 10
local n = #ARGV / k
local answer = {}
local j = 1
while j <= n do
  local last = math.min(n, j + 179)
  local args, m = {}, 0
  for q = j, last do
    for b = (q - 1) * k + 1, q * k do
      args[m + 1] = 'SET'; args[m + 2] = 'u1'; args[m + 3] = ARGV[b]; args[m + 4] = '1'
      m = m + 4
    end
  end
  local r = redis.call('BITFIELD', key, unpack(args, 1, m))
  local pos = 1
  for q = j, last do
    local was = true
    for _ = 1, k do
      if r[pos] == 0 then was = false end
      pos = pos + 1
    end
    answer[q] = was and '0' or '1'
  end
  j = last + 1
end
return table.concat(answer)
""",
    "block": r"""
local key = KEYS[1]
local sbyte, ssub, schar = string.byte, string.sub, string.char
local answer = {}
for i = 1, #ARGV / 3 do
  local a = 3 * i - 2
  local block = redis.call('GETRANGE', key, ARGV[a], ARGV[a + 1])
  local bits = ARGV[a + 2]  -- per byte touched: its index + 1 and its mask, ascending
  local new = false
  for j = 1, #bits, 2 do
    local x, m = sbyte(bits, j, j + 1)
    if bit.band(sbyte(block, x), m) ~= m then new = true; break end
  end
  if new then
    local parts, c, prev = {}, 0, 1
    for j = 1, #bits, 2 do
      local x, m = sbyte(bits, j, j + 1)
      parts[c + 1] = ssub(block, prev, x - 1)
      parts[c + 2] = schar(bit.bor(sbyte(block, x), m))
      c = c + 2
      prev = x + 1
    end
    parts[c + 1] = ssub(block, prev)
    redis.call('SETRANGE', key, ARGV[a], table.concat(parts))
  end
  answer[i] = new and '1' or '0'
end
return table.concat(answer)
""",
}


def resp(parts):
    out = [b"*%d\r\n" % len(parts)]
    for p in parts:
        if isinstance(p, str):
            p = p.encode("latin-1")
        out.append(b"$%d\r\n%s\r\n" % (len(p), p))
    return b"".join(out)


def batch(variant, rng, sha):
    args = []
    for _ in range(BATCH):
        block = rng.randrange(BLOCKS)
        pos = rng.sample(range(512), K)
        if variant == "sadd":
            args.append("%040x" % rng.getrandbits(160))
        elif variant == "bitfield":
            for p in pos:
                args += ["SET", "u1", str(block * 512 + p), "1"]
        elif variant in ("function", "wide"):
            args += [str(block * 512 + p) for p in pos]
        elif variant == "block":
            masks = {}
            for p in pos:
                masks[p // 8] = masks.get(p // 8, 0) | (1 << (p % 8))
            args += [str(block * 64), str(block * 64 + 63),
                     "".join(chr(x + 1) + chr(masks[x]) for x in sorted(masks))]
        else:
            sys.exit("unknown variant " + variant)
    if variant == "sadd":
        return b"".join(resp(["SADD", "s", a]) for a in args)
    if variant == "bitfield":
        return resp(["BITFIELD", "bloom"] + args)
    return resp(["EVALSHA", sha, "1", "bloom"] + args)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "lua":
        print(LUA.get(sys.argv[2], "return 1"))
        return
    if len(sys.argv) != 5 or sys.argv[1] != "resp":
        sys.exit(__doc__)
    rng = random.Random(1)
    out = sys.stdout.buffer
    for _ in range(int(sys.argv[4])):
        out.write(batch(sys.argv[2], rng, sys.argv[3]))


if __name__ == "__main__":
    main()

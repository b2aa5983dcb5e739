-- balancer/chash.lua: consistent hashing of upstream-hash-by, as
-- ingress-nginx v1.15: the key is the expression with its nginx variables
-- ($name, ${name}) replaced by their values, text kept ("${request_uri}-x";
-- an unknown or empty variable is ""); it is placed on a sorted ring of
-- 32-bit points, POINTS per endpoint. Removing an endpoint moves only the
-- keys it owned.
--
-- With upstreamHashBySubsetSize (upstream-hash-by-subset), the ring holds
-- subsets of that many endpoints instead ("set1", "set2", ... in endpoint
-- order, the last one filled up from the first endpoints) and a request
-- goes to an endpoint of its key's subset at random.
--
-- Points and keys are placed by the first 32 bits of MD5, not CRC32: CRC32 is
-- linear, so similar strings ("ep#1", "ep#2", "/key-1", "/key-2") land in
-- correlated places and one endpoint could own a small fraction of the ring.

local var_get = require("nvar").get
local md5 = ngx.md5
local concat = table.concat
local sort = table.sort
local random = math.random
local floor = math.floor
local str_find = string.find
local str_sub = string.sub
local str_byte = string.byte

local POINTS = 160

local function hash32(s)
  return tonumber(md5(s):sub(1, 8), 16)
end

local _M = {}
local mt = { __index = _M }

-- Ring: owners of the points of items (tables with an id).
local ring = {}
local ring_mt = { __index = ring }

-- ring_of returns the ring of items; exported for balancer/sticky.
function _M.ring(items)
  local points = {}
  for i = 1, #items do
    local it = items[i]
    for p = 1, POINTS do
      points[#points + 1] = { h = hash32(it.id .. "#" .. p), it = it }
    end
  end
  sort(points, function(a, b)
    if a.h ~= b.h then
      return a.h < b.h
    end
    return a.it.id < b.it.id
  end)
  local hashes, owners = {}, {}
  for i = 1, #points do
    hashes[i], owners[i] = points[i].h, points[i].it
  end
  return setmetatable({ hashes = hashes, owners = owners }, ring_mt)
end

-- index returns the first ring position at or after the hash of key.
function ring:index(key)
  local h = hash32(key)
  local hashes = self.hashes
  local lo, hi = 1, #hashes
  if h > hashes[hi] then
    return 1
  end
  while lo < hi do
    local mid = floor((lo + hi) / 2)
    if hashes[mid] < h then
      lo = mid + 1
    else
      hi = mid
    end
  end
  return lo
end

function ring:owner(key)
  return self.owners[self:index(key)]
end

-- parse splits an upstream-hash-by expression as ingress-nginx does:
-- ${name} and $name (letters, digits, '_') are variables, anything else
-- (a lone '$' included) is text.
local function parse(expr)
  local parts, pos, n = {}, 1, #expr
  local text = {}
  local function flush()
    if #text > 0 then
      parts[#parts + 1] = { lit = concat(text) }
      text = {}
    end
  end
  while pos <= n do
    local name, e
    if str_byte(expr, pos) == 36 then -- '$'
      local s
      s, e, name = str_find(expr, "^%${([%w_]+)}", pos)
      if not s then
        s, e, name = str_find(expr, "^%$([%w_]+)", pos)
      end
    end
    if name then
      flush()
      -- nginx's numeric variables are regex captures of its location;
      -- routes here match in Lua, so they are empty.
      parts[#parts + 1] = str_find(name, "^%d+$") and { lit = "" } or { var = name:lower() }
      pos = e + 1
    else
      local s2 = str_find(expr, "$", pos + 1, true) or n + 1
      text[#text + 1] = str_sub(expr, pos, s2 - 1)
      pos = s2
    end
  end
  flush()
  return parts
end
_M.parse = parse

-- subsets groups endpoints by size, as ingress-nginx's chashsubset.
local function subsets(endpoints, size)
  local list = {}
  for i = 1, #endpoints do
    list[i] = endpoints[i]
  end
  local count = math.ceil(#list / size)
  local j = 1
  for _ = #list + 1, count * size do
    list[#list + 1] = list[j]
    j = j + 1
  end
  local out, k = {}, 1
  for i = 1, count do
    local members = {}
    for m = 1, size do
      members[m] = list[k]
      k = k + 1
    end
    out[i] = { id = "set" .. i, members = members }
  end
  return out
end

-- new returns the balancer of a backend item (upstreamHashBy and
-- upstreamHashBySubsetSize) over endpoints.
function _M.new(endpoints, item)
  local parts = parse(item.upstreamHashBy)
  local o = { n = #endpoints, parts = parts, single = #parts == 1 and parts[1].var or nil }
  local size = item.upstreamHashBySubsetSize
  if size and #endpoints > 0 then
    o.ring = _M.ring(subsets(endpoints, size))
    o.subset = true
  else
    o.ring = _M.ring(endpoints)
  end
  return setmetatable(o, mt)
end

function _M:key()
  if self.single then
    return var_get(self.single) or ""
  end
  local buf = {}
  for i = 1, #self.parts do
    local p = self.parts[i]
    buf[i] = p.lit or var_get(p.var) or ""
  end
  return concat(buf)
end

-- owner returns the endpoint (or, with subsets, the subset) for key;
-- exported for tests and `backends`.
function _M:owner(key)
  return self.ring:owner(key)
end

local function any_member(set)
  local m = set.members
  return m[random(#m)]
end

function _M:pick()
  local o = self.ring:owner(self:key())
  if self.subset then
    return any_member(o)
  end
  return o
end

-- retry: with subsets, another member of the key's subset at random;
-- otherwise the attempt-th distinct endpoint clockwise from the key.
function _M:retry(attempt)
  local r = self.ring
  if self.subset then
    return any_member(r:owner(self:key()))
  end
  local owners, total = r.owners, #r.owners
  local i = r:index(self:key())
  local seen, distinct = {}, 0
  for _ = 1, total do
    local ep = owners[i]
    if not seen[ep] then
      seen[ep] = true
      distinct = distinct + 1
      if distinct == attempt then
        return ep
      end
    end
    i = i % total + 1
  end
  return owners[i]
end

return _M

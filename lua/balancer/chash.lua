-- balancer/chash.lua: consistent hashing of an nginx variable expression
-- (such as "$request_uri" or "${host}$uri") on a sorted ring of 32-bit
-- points, POINTS per endpoint. Removing an endpoint moves only the keys it
-- owned.
--
-- Points and keys are placed by the first 32 bits of MD5, not CRC32: CRC32 is
-- linear, so similar strings ("ep#1", "ep#2", "/key-1", "/key-2") land in
-- correlated places and one endpoint could own a small fraction of the ring.

local md5 = ngx.md5
local concat = table.concat
local sort = table.sort

local POINTS = 160

local function hash32(s)
  return tonumber(md5(s):sub(1, 8), 16)
end

local _M = {}
local mt = { __index = _M }

-- parse splits an expression into literal strings and variable names.
local function parse(expr)
  local parts, pos = {}, 1
  while pos <= #expr do
    local s, e, name = expr:find("%${?([%w_]+)}?", pos)
    if not s then
      parts[#parts + 1] = { lit = expr:sub(pos) }
      break
    end
    if s > pos then
      parts[#parts + 1] = { lit = expr:sub(pos, s - 1) }
    end
    parts[#parts + 1] = { var = name }
    pos = e + 1
  end
  return parts
end

function _M.new(endpoints, hash_by)
  local points = {}
  for i = 1, #endpoints do
    local ep = endpoints[i]
    for p = 1, POINTS do
      points[#points + 1] = { h = hash32(ep.id .. "#" .. p), ep = ep }
    end
  end
  sort(points, function(a, b)
    if a.h ~= b.h then
      return a.h < b.h
    end
    return a.ep.id < b.ep.id
  end)
  local hashes, owners = {}, {}
  for i = 1, #points do
    hashes[i], owners[i] = points[i].h, points[i].ep
  end
  local parts = parse(hash_by)
  local single = #parts == 1 and parts[1].var or nil
  return setmetatable({ hashes = hashes, owners = owners, n = #endpoints,
                        parts = parts, single = single }, mt)
end

function _M:key()
  local var = ngx.var
  if self.single then
    return var[self.single] or ""
  end
  local buf = {}
  for i = 1, #self.parts do
    local p = self.parts[i]
    buf[i] = p.lit or var[p.var] or ""
  end
  return concat(buf)
end

-- index returns the first ring position at or after the hash of key.
function _M:index(key)
  local h = hash32(key)
  local hashes = self.hashes
  local lo, hi = 1, #hashes
  if h > hashes[hi] then
    return 1
  end
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if hashes[mid] < h then
      lo = mid + 1
    else
      hi = mid
    end
  end
  return lo
end

-- owner returns the endpoint for key; exported for tests and `backends`.
function _M:owner(key)
  return self.owners[self:index(key)]
end

function _M:pick()
  return self.owners[self:index(self:key())]
end

-- retry returns the attempt-th distinct endpoint clockwise from the key.
function _M:retry(attempt)
  local owners, total = self.owners, #self.owners
  local i = self:index(self:key())
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

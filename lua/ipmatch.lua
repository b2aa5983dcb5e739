-- ipmatch.lua: matches client addresses against lists of CIDRs (IPv4 and
-- IPv6), for the allow- and deny-lists of routes. A list is parsed once per
-- change and worker into the sorted, merged address ranges of each family;
-- a match costs one inet_pton and a binary search over them: O(log n) in
-- the number of CIDRs. Addresses and range ends are 4 or 16 byte strings,
-- which LuaJIT compares as unsigned bytes, in network order.

local ffi = require("ffi")
local bit = require("bit")

local str_byte = string.byte
local str_char = string.char
local str_sub = string.sub
local str_rep = string.rep
local band = bit.band
local bor = bit.bor
local bnot = bit.bnot
local rshift = bit.rshift
local floor = math.floor
local sort = table.sort

ffi.cdef [[
int inet_pton(int af, const char *src, void *dst);
]]

local AF_INET = 2
local AF_INET6 = 10
local buf = ffi.new("unsigned char[16]")

local _M = {}

-- parse returns the address as a 4 or 16 byte string, or nil.
local function parse(addr)
  if type(addr) ~= "string" or #addr > 45 then
    return nil
  end
  if addr:find(":", 1, true) then
    if ffi.C.inet_pton(AF_INET6, addr, buf) == 1 then
      return ffi.string(buf, 16)
    end
  elseif ffi.C.inet_pton(AF_INET, addr, buf) == 1 then
    return ffi.string(buf, 4)
  end
  return nil
end
_M.parse = parse

local MAPPED = str_rep("\0", 10) .. "\255\255"

-- range returns the first and last address of "a.b.c.d/n" (or of a single
-- address), or nil and an error.
local function range(s)
  if type(s) ~= "string" then
    return nil, "invalid entry"
  end
  local addr, bits = s:match("^([^/]+)/(%d+)$")
  if not addr then
    addr = s
  end
  local b = parse(addr)
  if not b then
    return nil, "invalid address in " .. s
  end
  local n = bits and tonumber(bits) or #b * 8
  if (bits and #bits > 3) or n > #b * 8 then
    return nil, "invalid prefix length in " .. s
  end
  local full = floor(n / 8)
  local rest = n - full * 8
  local head = str_sub(b, 1, full)
  local len = #b
  if full == len then
    return b, b, len
  end
  local host = rest > 0 and rshift(0xff, rest) or 0xff
  local x = str_byte(b, full + 1)
  local tail = len - full - 1
  local lo = head .. str_char(band(x, band(0xff, bnot(host)))) .. str_rep("\0", tail)
  local hi = head .. str_char(bor(x, host)) .. str_rep("\255", tail)
  return lo, hi, len
end

-- merged sorts ranges by their first address and merges those that
-- overlap: the result is disjoint, ascending in both ends.
local function merged(list)
  sort(list, function(a, b) return a[1] < b[1] end)
  local lo, hi, n = {}, {}, 0
  for i = 1, #list do
    local r = list[i]
    if n > 0 and r[1] <= hi[n] then
      if r[2] > hi[n] then
        hi[n] = r[2]
      end
    else
      n = n + 1
      lo[n], hi[n] = r[1], r[2]
    end
  end
  return { lo = lo, hi = hi, n = n }
end

-- new returns a matcher for a list of CIDRs, or nil and an error: an entry
-- that does not parse fails the whole list (the caller fails closed).
function _M.new(cidrs)
  if type(cidrs) ~= "table" or #cidrs == 0 then
    return nil, "empty list"
  end
  local lists = { [4] = {}, [16] = {} }
  for i = 1, #cidrs do
    local lo, hi, len = range(cidrs[i])
    if not lo then
      return nil, hi
    end
    local l = lists[len]
    l[#l + 1] = { lo, hi }
  end
  return { [4] = merged(lists[4]), [16] = merged(lists[16]) }
end

-- search reports whether b is in one of the ranges of t: the last range
-- whose first address is <= b must also end at or after b.
local function search(t, b)
  local lo, hi = 1, t.n
  local first = t.lo
  while lo <= hi do
    local mid = floor((lo + hi) / 2)
    if first[mid] <= b then
      lo = mid + 1
    else
      hi = mid - 1
    end
  end
  return hi >= 1 and b <= t.hi[hi]
end

-- match reports whether addr is in one of the matcher's CIDRs. An address
-- that does not parse never matches; an IPv4-mapped IPv6 address matches
-- the IPv4 CIDRs too.
function _M.match(m, addr)
  local b = parse(addr)
  if not b then
    return false
  end
  if search(m[#b], b) then
    return true
  end
  if #b == 16 and str_sub(b, 1, 12) == MAPPED then
    return search(m[4], str_sub(b, 13))
  end
  return false
end

-- admits reports whether a route's compiled lists {allow, deny} let addr
-- in without more (satisfy any, as nginx's access rules: deny first; only
-- an allow-list can admit).
function _M.admits(acl, addr)
  if not (acl and acl.allow) then
    return false
  end
  return not (acl.deny and _M.match(acl.deny, addr)) and _M.match(acl.allow, addr)
end

return _M

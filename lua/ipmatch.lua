-- ipmatch.lua: matches client addresses against lists of CIDRs (IPv4 and
-- IPv6), for the allow-lists of routes. A list is parsed once per change and
-- worker; a match costs one inet_pton and a byte comparison per CIDR of the
-- address family.

local ffi = require("ffi")
local bit = require("bit")

local str_byte = string.byte
local str_sub = string.sub
local band = bit.band
local lshift = bit.lshift

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

local MAPPED = ("\0"):rep(10) .. "\255\255"

-- parse_cidr returns {bytes, full, mask, last} for "a.b.c.d/n" or an address.
local function parse_cidr(s)
  local addr, bits = s:match("^([^/]+)/(%d+)$")
  if not addr then
    addr = s
  end
  local b = parse(addr)
  if not b then
    return nil, "invalid address in " .. s
  end
  local n = bits and tonumber(bits) or #b * 8
  if n > #b * 8 then
    return nil, "invalid prefix length in " .. s
  end
  local full = math.floor(n / 8)
  local rest = n - full * 8
  local mask = rest > 0 and band(lshift(0xff, 8 - rest), 0xff) or 0
  return { len = #b, prefix = str_sub(b, 1, full), full = full, mask = mask,
           last = rest > 0 and band(str_byte(b, full + 1), mask) or 0 }
end

-- new returns a matcher for a list of CIDRs, or nil and an error: an entry
-- that does not parse fails the whole list (the caller fails closed).
function _M.new(cidrs)
  if type(cidrs) ~= "table" or #cidrs == 0 then
    return nil, "empty allow-list"
  end
  local m = { [4] = {}, [16] = {} }
  for i = 1, #cidrs do
    local c, err = parse_cidr(cidrs[i])
    if not c then
      return nil, err
    end
    local list = m[c.len]
    list[#list + 1] = c
  end
  return m
end

local function match_list(list, b)
  for i = 1, #list do
    local c = list[i]
    if (c.full == 0 or str_sub(b, 1, c.full) == c.prefix)
        and (c.mask == 0 or band(str_byte(b, c.full + 1), c.mask) == c.last) then
      return true
    end
  end
  return false
end

-- match reports whether addr is in one of the matcher's CIDRs. An address
-- that does not parse never matches.
function _M.match(m, addr)
  local b = parse(addr)
  if not b then
    return false
  end
  if match_list(m[#b], b) then
    return true
  end
  if #b == 16 and str_sub(b, 1, 12) == MAPPED then
    return match_list(m[4], str_sub(b, 13))
  end
  return false
end

return _M

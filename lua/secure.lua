-- secure.lua: comparisons for credentials.

local str_byte = string.byte
local bor, bxor = bit.bor, bit.bxor

local _M = {}

-- equal compares two strings in time that depends only on their lengths
-- (never on where they first differ).
function _M.equal(a, b)
  if #a ~= #b then
    return false
  end
  local d = 0
  for i = 1, #a do
    d = bor(d, bxor(str_byte(a, i), str_byte(b, i)))
  end
  return d == 0
end

return _M

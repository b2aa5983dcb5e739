-- canary.lua: the canary of a route (nginx.ingress.kubernetes.io/canary-*),
-- chosen per request as ingress-nginx v1.15 does. A route item's canary:
--
--   backend         the canary's backend name
--   ingress         "namespace/name" of the canary Ingress, for inspection
--   weight, weightTotal   weight of weightTotal requests go to the canary
--                   at random (0 <= weight <= weightTotal, weightTotal >= 1)
--   header          request header name (letters, digits, '-', '_')
--   headerValue     the header's value that sends to the canary, exactly
--   headerPattern   PCRE matched against the header's value (case
--                   sensitive, unanchored), when there is no headerValue
--   cookie          cookie name
--
-- Affinity comes first, as in ingress-nginx: a request whose affinity
-- cookie was set by the main backend stays there, one whose cookie was set
-- by the canary's backend (which has the main's affinity unless
-- affinity-canary-behavior is legacy) goes there.
--
-- Then, precedence: header, then cookie, then weight. Without headerValue and
-- headerPattern, header "always" sends to the canary and "never" to the
-- main backend; a cookie likewise. Any other value goes on to the next
-- rule. A headerPattern that fails to match with an error (the match
-- limit) sends to the main backend.

local ngx = ngx
local var_get = require("nvar").get
local re_match = ngx.re.match
local random = math.random
local type = type
local str_find = string.find
local str_gsub = string.gsub
local str_lower = string.lower
local math_floor = math.floor
local backends = require("balancer").backends

local _M = {}

local PATTERN_FLAGS = "jo"
local MAX_WEIGHT = 1000000000

local function is_count(v, lo)
  return type(v) == "number" and v == math_floor(v) and v >= lo and v <= MAX_WEIGHT
end

local function is_token(v, chars)
  return type(v) == "string" and #v > 0 and #v <= 256 and not str_find(v, "[^" .. chars .. "]")
end

local function optional_string(v)
  return v == nil or (type(v) == "string" and #v > 0)
end

-- compile validates a route's canary item and returns the worker's form
-- of it, or nil and an error.
function _M.compile(c)
  if type(c) ~= "table" then
    return nil, "must be an object"
  end
  if type(c.backend) ~= "string" or #c.backend == 0 then
    return nil, "needs a backend"
  end
  local total = c.weightTotal
  local weight = c.weight or 0
  if not is_count(total, 1) or not is_count(weight, 0) or weight > total then
    return nil, "invalid weight or weightTotal"
  end
  if c.header ~= nil and not is_token(c.header, "%w_%-") then
    return nil, "invalid header"
  end
  if c.cookie ~= nil and not is_token(c.cookie, "%w!#%%&'*+%.%^_`|~%-") then
    return nil, "invalid cookie"
  end
  if not (optional_string(c.headerValue) and optional_string(c.headerPattern)) then
    return nil, "invalid headerValue or headerPattern"
  end
  if c.headerPattern then
    local _, err = re_match("", c.headerPattern, PATTERN_FLAGS)
    if err then
      return nil, "headerPattern: " .. err
    end
  end
  local out = { backend = c.backend, weight = weight, total = total }
  if c.header then
    out.header_var = "http_" .. str_gsub(str_lower(c.header), "-", "_")
    out.value = c.headerValue
    out.pattern = not c.headerValue and c.headerPattern or nil
  end
  if c.cookie then
    out.cookie_var = "cookie_" .. c.cookie
  end
  return out
end

-- by_header returns true (canary), false (main) or nil (no decision).
local function by_header(c)
  local v = var_get(c.header_var)
  if not v then
    return nil
  end
  if c.value then
    if v == c.value then
      return true
    end
    return nil
  end
  if c.pattern then
    local m, err = re_match(v, c.pattern, PATTERN_FLAGS)
    if m then
      return true
    end
    if err then
      ngx.log(ngx.ERR, "canary header pattern ", c.pattern, ": ", err)
      return false
    end
    return nil
  end
  if v == "always" then
    return true
  elseif v == "never" then
    return false
  end
  return nil
end

-- affinitized reports whether the request's affinity cookie was set by
-- the sticky backend named name.
local function affinitized(name)
  local e = backends:lookup(name)
  return e ~= nil and e.kind == "sticky" and e.algo:affinitized()
end

-- choose returns the backend of this request on route, which has a canary.
function _M.choose(route)
  local c = route.canary
  if affinitized(route.backend) then
    return route.backend
  elseif affinitized(c.backend) then
    return c.backend
  end
  local to_canary
  if c.header_var then
    to_canary = by_header(c)
  end
  if to_canary == nil and c.cookie_var then
    local v = var_get(c.cookie_var)
    if v == "always" then
      to_canary = true
    elseif v == "never" then
      to_canary = false
    end
  end
  if to_canary == nil then
    to_canary = c.weight > 0 and random(c.total) <= c.weight
  end
  if to_canary then
    return c.backend
  end
  return route.backend
end

return _M

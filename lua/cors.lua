-- cors.lua: a route's CORS policy (enable-cors and the cors-* annotations),
-- applied in router.lua's rewrite as ingress-nginx applies it: when the
-- request's Origin is allowed (or any origin is), the Access-Control-*
-- response headers are set through the $cors_* variables of nginx.conf
-- (add_header ... always, so every answer carries them), and a preflight
-- OPTIONS request is answered 204 without reaching the backend. A request
-- whose Origin is not allowed passes unchanged, without the headers.
--
-- A policy item: originRegex (PCRE matched case-insensitively against the
-- whole Origin; absent: any origin, answered "*"), methods, headers, expose
-- (header values), credentials (boolean), maxAge (seconds).

local ngx = ngx
local nvar = require("nvar")
local var_get, var_set = nvar.get, nvar.set
local re_find = ngx.re.find
local str_find = string.find
local tostring = tostring

local _M = {}

local FLAGS = "ijo"

-- header_value accepts what may follow "Name: " in a response header.
local function header_value(v, optional)
  if v == nil then
    return optional
  end
  return type(v) == "string" and not str_find(v, "[%c\127]")
end

-- compile validates a policy item and returns the worker's form of it.
function _M.compile(c)
  if type(c) ~= "table" then
    return nil, "cors must be an object"
  end
  if not (header_value(c.methods) and header_value(c.headers) and header_value(c.expose, true)) then
    return nil, "cors: methods, headers and expose must be header values"
  end
  if type(c.maxAge) ~= "number" or c.maxAge < 0 or c.maxAge ~= math.floor(c.maxAge) then
    return nil, "cors: maxAge must be a whole number of seconds"
  end
  local rx = c.originRegex
  if rx ~= nil then
    if type(rx) ~= "string" then
      return nil, "cors: originRegex must be a string"
    end
    local _, _, err = re_find("", rx, FLAGS)
    if err then
      return nil, "cors: originRegex: " .. err
    end
  end
  return {
    re = rx, methods = c.methods, headers = c.headers, expose = c.expose ~= "" and c.expose or nil,
    credentials = c.credentials == true, max_age = tostring(c.maxAge),
  }
end

-- apply sets the CORS headers when the request's origin is allowed, and
-- answers a preflight request itself.
function _M.apply(c)
  local origin = "*"
  if c.re then
    origin = var_get("http_origin")
    if not origin or not re_find(origin, c.re, FLAGS) then
      return
    end
  end
  var_set("cors_origin", origin)
  if c.credentials then
    var_set("cors_credentials", "true")
  end
  var_set("cors_methods", c.methods)
  var_set("cors_headers", c.headers)
  if c.expose then
    var_set("cors_expose", c.expose)
  end
  var_set("cors_max_age", c.max_age)
  if ngx.req.get_method() == "OPTIONS" then
    return ngx.exit(204) -- nginx sends no Content-Type or Content-Length with a 204
  end
end

return _M

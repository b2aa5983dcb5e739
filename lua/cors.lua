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
--
-- A Gateway API CORS filter (compile_route, apply_route) is a routeCORS
-- item {allowOrigins, allowMethods, allowHeaders, exposeHeaders,
-- allowCredentials, maxAge}: an origin is "*" or "scheme://host[:port]"
-- whose host may start with "*", matching any number of labels; a list
-- holding "*" allows anything, answered with the request's own values
-- (Access-Control-Request-Method, -Headers), as credentials require. Only a
-- request with an Origin the filter allows gets the headers, the Origin
-- echoed; a preflight (OPTIONS with Access-Control-Request-Method) is
-- answered 204 whether its origin is allowed or not (then without them).

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

local ORIGIN = "^https?://[%w.*-]+$"

-- origin_pattern is the PCRE of an allowed origin (not "*"): "*" in the
-- host stands for any characters (labels and dots).
local function origin_pattern(o)
  if type(o) ~= "string" or #o > 253 then
    return nil
  end
  local host_port = o:gsub(":%d+$", "")
  if not str_find(host_port, ORIGIN) then
    return nil
  end
  return (o:gsub("[%.%-]", "\\%0"):gsub("%*", "[^/]*"))
end

-- compile_list returns a list's header value (joined by ", ") and
-- whether it holds "*"; nil for none, or an error.
local function compile_list(list, what)
  if list == nil then
    return nil, false
  end
  if type(list) ~= "table" or #list > 64 then
    return nil, false, what .. " must be an array"
  end
  local any = false
  for i = 1, #list do
    local v = list[i]
    if type(v) ~= "string" or not str_find(v, "^[%w!#$%%&'*+.^_`|~-]+$") then
      return nil, false, what .. ": invalid value"
    end
    any = any or v == "*"
  end
  if #list == 0 then
    return nil, false
  end
  return table.concat(list, ", "), any
end

-- compile_route validates a routeCORS item and returns its worker's form.
function _M.compile_route(c)
  if type(c) ~= "table" or not (c.maxAge == nil or (type(c.maxAge) == "number" and c.maxAge >= 0 and c.maxAge <= 86400
      and c.maxAge % 1 == 0)) then
    return nil, "invalid routeCORS"
  end
  local out = { credentials = c.allowCredentials == true, max_age = c.maxAge and c.maxAge > 0 and tostring(c.maxAge) or nil }
  local alts = {}
  for i = 1, #(c.allowOrigins or {}) do
    local o = c.allowOrigins[i]
    if o == "*" then
      out.any_origin = true
    else
      local p = origin_pattern(o)
      if not p then
        return nil, "routeCORS: invalid origin"
      end
      alts[#alts + 1] = p
    end
  end
  if #alts > 0 then
    out.re = "^(?:" .. table.concat(alts, "|") .. ")$"
    local _, _, err = re_find("", out.re, FLAGS)
    if err then
      return nil, "routeCORS: " .. err
    end
  end
  local merr, herr, eerr
  out.methods, out.methods_any, merr = compile_list(c.allowMethods, "routeCORS.allowMethods")
  out.headers, out.headers_any, herr = compile_list(c.allowHeaders, "routeCORS.allowHeaders")
  out.expose, out.expose_any, eerr = compile_list(c.exposeHeaders, "routeCORS.exposeHeaders")
  if merr or herr or eerr then
    return nil, merr or herr or eerr
  end
  return out
end

-- echo is the value of a list holding "*": the request's own (from
-- header var), else "*".
local function echo(any, value, var)
  if any then
    return var_get(var) or value
  end
  return value
end

-- apply_route applies a compiled Gateway API CORS filter.
function _M.apply_route(c)
  local origin = var_get("http_origin")
  if not origin then
    return
  end
  local preflight = var_get("request_method") == "OPTIONS" and var_get("http_access_control_request_method") ~= nil
  if not (c.any_origin or (c.re and re_find(origin, c.re, FLAGS))) then
    if preflight then
      return ngx.exit(204)
    end
    return
  end
  var_set("cors_origin", origin)
  if c.credentials then
    var_set("cors_credentials", "true")
  end
  if c.methods then
    var_set("cors_methods", echo(c.methods_any, c.methods, "http_access_control_request_method"))
  end
  if c.headers then
    var_set("cors_headers", echo(c.headers_any, c.headers, "http_access_control_request_headers"))
  end
  if c.expose and not (c.expose_any and c.credentials) then
    var_set("cors_expose", c.expose)
  end
  if c.max_age then
    var_set("cors_max_age", c.max_age)
  end
  if preflight then
    return ngx.exit(204)
  end
end

return _M

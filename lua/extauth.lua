-- extauth.lua: external auth of a route (auth-url, global-auth-url), as
-- ingress-nginx's auth_request locations. A route's extAuth is
--   { url, host, method, signin, responseHeaders, requestRedirect,
--     cacheKey, cacheDurations = [{codes, ms}], proxySetHeaders = [{name,
--     value}], alwaysSetCookie, satisfyAny }   or   { unavailable = true }
-- (the syncer could not apply the annotations: 503, fail closed). url,
-- signin and cacheKey are templates of literal text and the variables
-- VARIABLES lists, split at compile time and expanded per request.
--
-- check() captures the fixed location /_ingress_auth of nginx.conf (no
-- body; the $ingress_auth_* variables it reads are passed with the
-- capture), which proxies to the expanded URL within the auth timeout.
-- Its answer: 2xx goes on, with responseHeaders copied from the auth
-- response to the request (absent: removed, so a client cannot send them);
-- 401 answers 401 with the auth's WWW-Authenticate, or a 302 to signin;
-- 403 answers 403; anything else (the auth service down, too slow, 5xx) is
-- 500, never the protected content. The auth response's Set-Cookie goes
-- into $ingress_auth_cookie (or _always), which nginx.conf's add_header
-- sends. With cacheKey, answers whose code cacheDurations lists are kept in
-- the ingress_auth_cache shared dict, keyed by host, route, URL and the
-- expanded key (not those with Set-Cookie or Cache-Control no-store,
-- no-cache or private). satisfyAny: a client the route's allow/deny lists
-- admit needs no auth request (router.lua's check_auth).


local ngx = ngx
local nvar = require("nvar")
local AUTH_CACHE = require("settings").AUTH_CACHE
local var_get, var_set = nvar.get, nvar.set
local capture = ngx.location.capture
local escape_uri = ngx.escape_uri
local md5 = ngx.md5
local set_header = ngx.req.set_header
local str_find = string.find
local str_sub = string.sub
local str_gsub = string.gsub
local str_byte = string.byte
local str_format = string.format
local str_lower = string.lower
local concat = table.concat
local type = type
local ipairs = ipairs
local pairs = pairs
local tonumber = tonumber

local _M = {}

local LOCATION = "/_ingress_auth"
local DEFAULT_CODES = { 200, 301, 302 } -- proxy_cache_valid without codes

-- VARIABLES are the variables a template may hold, as pkg/model's
-- authVariables; http_*, cookie_* and arg_* too.
local VARIABLES = {
  host = true, http_host = true, best_http_host = true, request_uri = true, escaped_request_uri = true,
  uri = true, args = true, is_args = true, query_string = true, scheme = true, pass_access_scheme = true,
  server_port = true, pass_server_port = true, request_method = true, remote_addr = true, remote_user = true,
  server_name = true, request_id = true,
}

local METHODS = { GET = ngx.HTTP_GET, HEAD = ngx.HTTP_HEAD, POST = ngx.HTTP_POST, PUT = ngx.HTTP_PUT,
  PATCH = ngx.HTTP_PATCH, DELETE = ngx.HTTP_DELETE, OPTIONS = ngx.HTTP_OPTIONS, TRACE = ngx.HTTP_TRACE }

local function variable_ok(name)
  if VARIABLES[name] then
    return true
  end
  local rest = name:match("^http_([a-z0-9_]+)$") or name:match("^cookie_([%w_]+)$") or name:match("^arg_([%w_]+)$")
  return rest ~= nil
end

-- compile_template splits t into literal strings and {name} variables.
local function compile_template(t, what)
  if type(t) ~= "string" or t == "" or #t > 2048 or str_find(t, "[%c%s\"'\\;`]") then
    return nil, "extAuth: invalid " .. what
  end
  local parts, i, n = {}, 1, #t
  while i <= n do
    local d = str_find(t, "$", i, true)
    if not d then
      parts[#parts + 1] = str_sub(t, i)
      break
    end
    if d > i then
      parts[#parts + 1] = str_sub(t, i, d - 1)
    end
    local name, after = t:match("^{([%w_]+)}()", d + 1)
    if not name then
      name, after = t:match("^([%w_]+)()", d + 1)
    end
    if not name or not variable_ok(name) then
      return nil, "extAuth: " .. what .. " has an invalid variable"
    end
    parts[#parts + 1] = { name }
    i = after
  end
  return parts
end
_M.compile_template = compile_template

local function value_of(name)
  if name == "escaped_request_uri" then
    return escape_uri(var_get("request_uri"))
  end
  return var_get(name) or ""
end

local function pct(c)
  return str_format("%%%02X", str_byte(c))
end

-- expand returns the template's text for this request; with url, the
-- variables' spaces, control and non-ASCII bytes are percent-encoded.
local function expand(parts, url)
  local n = #parts
  if n == 1 and type(parts[1]) == "string" then
    return parts[1]
  end
  local out = {}
  for i = 1, n do
    local p = parts[i]
    if type(p) == "string" then
      out[i] = p
    else
      local v = value_of(p[1])
      if url and str_find(v, "[%s%c\128-\255]") then
        v = str_gsub(v, "[%s%c\128-\255]", pct)
      end
      out[i] = v
    end
  end
  return concat(out)
end
_M.expand = expand

local function is_token(v)
  return type(v) == "string" and #v > 0 and #v <= 256 and str_find(v, "^[%w!#$%%&'*+.^_`|~-]+$") ~= nil
end

-- compile_cache sets c.cache_key and c.ttl (code -> seconds).
local function compile_cache(c, a)
  if a.cacheKey == nil then
    return true
  end
  local parts, err = compile_template(a.cacheKey, "cacheKey")
  if not parts then
    return nil, err
  end
  if type(a.cacheDurations) ~= "table" then
    return nil, "extAuth: cacheDurations must be an array"
  end
  local ttl = {}
  for _, d in ipairs(a.cacheDurations) do
    if type(d) ~= "table" or type(d.ms) ~= "number" or d.ms <= 0 then
      return nil, "extAuth: invalid cache duration"
    end
    for _, code in ipairs(d.codes or DEFAULT_CODES) do
      if type(code) ~= "number" or code < 100 or code > 599 then
        return nil, "extAuth: invalid cache code"
      end
      if ttl[code] == nil then
        ttl[code] = d.ms / 1000
      end
    end
  end
  c.cache_key, c.ttl = parts, ttl
  return true
end

-- compile_headers returns the names of responseHeaders and the
-- {name, value} pairs of proxySetHeaders.
local function compile_headers(a)
  local names, set = {}, nil
  for _, h in ipairs(a.responseHeaders or {}) do
    if type(h) ~= "string" or not str_find(h, "^[%w_-]+$") then
      return nil, "extAuth: invalid responseHeaders"
    end
    names[#names + 1] = h
  end
  if a.proxySetHeaders ~= nil then
    set = {}
    for _, h in ipairs(a.proxySetHeaders) do
      if type(h) ~= "table" or not is_token(h.name) or type(h.value) ~= "string" or str_find(h.value, "[%z\1-\8\10-\31\127]") then
        return nil, "extAuth: invalid proxySetHeaders"
      end
      set[#set + 1] = { h.name, h.value }
    end
  end
  return names, set
end

-- compile returns the worker's form of a route's extAuth, or nil and an
-- error. r is the route (its ingress and path key the cache).
function _M.compile(a, r)
  if type(a) ~= "table" then
    return nil, "extAuth must be an object"
  end
  if a.unavailable == true then
    return { unavailable = true }
  end
  local url = a.url
  if type(url) ~= "string" or not str_find(url, "^https?://[%w.:%[%]-]+") or str_find(url, "^https?://[%w.:%[%]-]+[^%w.:%[%]/?-]") then
    return nil, "extAuth: url must be http(s)://host[:port] then a path"
  end
  local parts, err = compile_template(url, "url")
  if not parts then
    return nil, err
  end
  if type(a.host) ~= "string" or not str_find(a.host, "^[%w.:%[%]-]+$") then
    return nil, "extAuth: invalid host"
  end
  local c = { url = parts, host = a.host, always_cookie = a.alwaysSetCookie == true, satisfy_any = a.satisfyAny == true,
    prefix = (r.ingress or "") .. "\0" .. r.path .. "\0" .. url }
  if a.method ~= nil then
    c.method = METHODS[a.method]
    if not c.method then
      return nil, "extAuth: invalid method"
    end
    c.method_set = true
  end
  if a.signin ~= nil then
    c.signin, err = compile_template(a.signin, "signin")
    if not c.signin then
      return nil, err
    end
  end
  if a.requestRedirect ~= nil then
    if type(a.requestRedirect) ~= "string" or str_find(a.requestRedirect, "[%c%s]") then
      return nil, "extAuth: invalid requestRedirect"
    end
    c.redirect = a.requestRedirect
  end
  local names, set = compile_headers(a)
  if not names then
    return nil, set
  end
  c.headers, c.headers_lower = names, {}
  for i = 1, #names do
    c.headers_lower[i] = str_lower(names[i])
  end
  if set then
    c.ctx = { set_headers = set }
  end
  local ok, cerr = compile_cache(c, a)
  if not ok then
    return nil, cerr
  end
  return c
end

local function first(v)
  if type(v) == "table" then
    return v[1]
  end
  return v
end

local function joined(v)
  if type(v) == "table" then
    return concat(v, ", ")
  end
  return v
end

-- answer applies an auth answer: status, the WWW-Authenticate, the
-- auth response's Set-Cookie and the values of c.headers. It returns the
-- status to answer, or nil to go on.
local function answer(c, status, www, cookie, values)
  if cookie and cookie ~= "" then
    if c.always_cookie then
      var_set("ingress_auth_cookie_always", cookie)
    else
      var_set("ingress_auth_cookie", cookie)
    end
  end
  if status >= 200 and status < 300 then
    local names = c.headers
    for i = 1, #names do
      local v = values[i]
      set_header(names[i], v ~= "" and v or nil)
    end
    return nil
  end
  if status == 401 then
    if c.signin then
      return ngx.redirect(expand(c.signin, true), 302)
    end
    if www and www ~= "" then
      ngx.header["WWW-Authenticate"] = www
    end
    return 401
  end
  if status == 403 then
    return 403
  end
  return 500
end

local function no_store(cc)
  if not cc then
    return false
  end
  cc = str_lower(joined(cc))
  return str_find(cc, "no-store", 1, true) or str_find(cc, "no-cache", 1, true) or str_find(cc, "private", 1, true)
end

-- from_cache returns the cached answer of key: status, WWW-Authenticate and
-- the header values.
local function from_cache(v)
  local fields, i = {}, 1
  while true do
    local z = str_find(v, "\0", i, true)
    fields[#fields + 1] = str_sub(v, i, (z or 0) - 1)
    if not z then
      break
    end
    i = z + 1
  end
  local values = {}
  for k = 3, #fields do
    values[k - 2] = fields[k]
  end
  return tonumber(fields[1]), fields[2], values
end

-- request sends the auth request; it returns the status, WWW-Authenticate,
-- Set-Cookie, the values of c.headers and the response's Cache-Control.
local function request(c)
  local uri = var_get("request_uri")
  local vars = {
    ingress_auth_url = expand(c.url, true),
    ingress_auth_host = c.host,
    ingress_auth_original_url = var_get("scheme") .. "://" .. (var_get("http_host") or var_get("host")) .. uri,
    ingress_auth_original_method = ngx.req.get_method(),
    ingress_auth_redirect = c.redirect or uri,
    ingress_auth_request_id = var_get("req_id"),
  }
  if c.method_set then
    vars.ingress_auth_original_uri, vars.ingress_auth_scheme = uri, var_get("pass_access_scheme")
  end
  local res = capture(LOCATION, { method = c.method or ngx.HTTP_GET, vars = vars, ctx = c.ctx })
  local status = res.status
  if status < 200 or status >= 300 and status ~= 401 and status ~= 403 then
    ngx.log(ngx.WARN, "auth request to ", vars.ingress_auth_url, " answered ", status, ": 500")
  end
  local h = {} -- res.header's names are as the auth service wrote them
  for k, v in pairs(res.header) do
    h[str_lower(k)] = v
  end
  local values = {}
  local names = c.headers_lower
  for i = 1, #names do
    values[i] = joined(h[names[i]]) or ""
  end
  return status, first(h["www-authenticate"]), first(h["set-cookie"]), values, h["cache-control"]
end

-- check runs the route's external auth; it returns the status to answer,
-- or nil to go on.
function _M.check(c)
  if c.unavailable then
    return 503
  end
  local key, cache
  if c.cache_key then
    cache = ngx.shared[AUTH_CACHE]
    key = md5(c.prefix .. "\0" .. expand(c.cache_key, false))
    local v = cache:get(key)
    if v then
      local status, www, values = from_cache(v)
      return answer(c, status, www, nil, values)
    end
  end
  local status, www, cookie, values, cc = request(c)
  if key then
    local ttl = c.ttl[status]
    if ttl and not cookie and not no_store(cc) then
      cache:set(key, status .. "\0" .. (www or "") .. (#values > 0 and ("\0" .. concat(values, "\0")) or ""), ttl)
    end
  end
  return answer(c, status, www, cookie, values)
end

-- subrequest runs in /_ingress_auth: the auth-proxy-set-headers of the
-- route (the capture's ctx) go on the auth request only (a subrequest has
-- its own copy of the request headers).
function _M.subrequest()
  local set = ngx.ctx.set_headers
  if set then
    for i = 1, #set do
      set_header(set[i][1], set[i][2])
    end
  end
end

return _M

-- filters.lua: the Gateway API filters of routes (see routes.lua):
-- requestHeaderFilter and responseHeaderFilter ({set, add, remove}: set
-- replaces every value of a name, add appends a value, remove deletes the
-- name, in that order; set and add are header objects as headers.lua
-- takes them), routeRedirect ({scheme, hostname, port, path, code}: a
-- redirect built from the request) and rewritePath ({type, value}: the
-- path sent to the backend). A path modifier of type "full" replaces the
-- whole path, "prefix" the part the route's prefix matched (whole path
-- elements), keeping the rest.
--
-- compile validates them once per push; the router applies them per
-- request (apply_request in the rewrite phase; the response filter is
-- headers.lua's, marked by the router).

local headers = require("headers")

local ngx = ngx
local type = type
local str_find = string.find
local str_sub = string.sub
local str_byte = string.byte
local str_format = string.format
local unpack = unpack

local _M = {}

local MAX_REMOVE = 100
local SCHEMES = { http = true, https = true }
local CODES = { [301] = true, [302] = true, [303] = true, [307] = true, [308] = true }
local MODIFIERS = { full = true, prefix = true }

-- compile_header_filter returns {set, add, remove} (set and add arrays as
-- headers.compile makes them, remove an array of names), nil for none.
local function compile_header_filter(f, what)
  if f == nil then
    return nil
  end
  if type(f) ~= "table" then
    return nil, what .. " must be an object"
  end
  local set, err = headers.compile(f.set, what .. ".set")
  if err then
    return nil, err
  end
  local add, aerr = headers.compile(f.add, what .. ".add")
  if aerr then
    return nil, aerr
  end
  local remove = f.remove
  if remove ~= nil then
    if type(remove) ~= "table" or #remove > MAX_REMOVE then
      return nil, what .. ".remove must be an array of at most " .. MAX_REMOVE
    end
    for i = 1, #remove do
      if not headers.is_token(remove[i]) then
        return nil, what .. ".remove: invalid header name"
      end
    end
    if #remove == 0 then
      remove = nil
    end
  end
  if not set and not add and not remove then
    return nil
  end
  return { set = set, add = add, remove = remove }
end

-- compile_request_filter validates a request header filter f (a
-- backend's requestHeaderFilter), nil for none.
function _M.compile_request_filter(f)
  return compile_header_filter(f, "requestHeaderFilter")
end

-- is_path: an absolute path of printable ASCII without spaces.
local function is_path(v)
  return type(v) == "string" and #v <= 1024 and str_byte(v, 1) == 47 and not str_find(v, "[%c%s\127-\255]")
end

-- compile_modifier validates a path modifier of a route of type rtype.
local function compile_modifier(m, rtype)
  if m == nil then
    return nil
  end
  if type(m) ~= "table" or not MODIFIERS[m.type] or not is_path(m.value)
      or (m.type == "prefix" and rtype ~= "prefix") then
    return nil, "invalid path modifier (prefix only on prefix routes)"
  end
  return { full = m.type == "full", value = m.value }
end

-- compile_redirect validates a routeRedirect.
local function compile_redirect(rd, rtype)
  if rd == nil then
    return nil
  end
  if type(rd) ~= "table" or not CODES[rd.code] or not (rd.scheme == nil or SCHEMES[rd.scheme])
      or not (rd.port == nil or (type(rd.port) == "number" and rd.port >= 1 and rd.port <= 65535 and rd.port % 1 == 0))
      or not (rd.hostname == nil or (type(rd.hostname) == "string" and #rd.hostname <= 253
        and str_find(rd.hostname, "^[%w][%w.-]*$"))) then
    return nil, "invalid routeRedirect"
  end
  local path, err = compile_modifier(rd.path, rtype)
  if err then
    return nil, err
  end
  return { scheme = rd.scheme, hostname = rd.hostname, port = rd.port, path = path, code = rd.code }
end

-- compile sets the filters of route (its type set) from the route item
-- r: req_filter, resp_filter, gw_redirect and rewrite_path. It returns
-- true, or nil and an error.
function _M.compile(route, r)
  local err
  route.req_filter, err = compile_header_filter(r.requestHeaderFilter, "requestHeaderFilter")
  if err then
    return nil, err
  end
  route.resp_filter, err = compile_header_filter(r.responseHeaderFilter, "responseHeaderFilter")
  if err then
    return nil, err
  end
  route.gw_redirect, err = compile_redirect(r.routeRedirect, route.type)
  if err then
    return nil, err
  end
  route.rewrite_path, err = compile_modifier(r.rewritePath, route.type)
  if err then
    return nil, err
  end
  return true
end

-- modify returns uri changed by path modifier m of a route whose prefix
-- (for "prefix") is prefix: the replacement, without its trailing
-- slashes, then what of uri follows the prefix; "/" for nothing.
function _M.modify(m, prefix, uri)
  if m.full then
    return m.value
  end
  local rest = uri
  if prefix ~= "/" then
    rest = str_sub(uri, #prefix + 1)
  end
  local base = m.value
  local n = #base
  while n > 0 and str_byte(base, n) == 47 do
    n = n - 1
  end
  local out = str_sub(base, 1, n) .. rest
  if out == "" then
    return "/"
  end
  return out
end

-- escape_path percent-encodes what a decoded path may hold that a
-- Location header must not (controls, spaces, non-ASCII).
function _M.escape_path(p)
  if not str_find(p, "[%c%s\127-\255]") then
    return p
  end
  return (p:gsub("[%c%s\127-\255]", function(c) return str_format("%%%02X", str_byte(c)) end))
end

-- apply_request applies a compiled request header filter f.
function _M.apply_request(f)
  local set = ngx.req.set_header
  local s = f.set
  if s then
    for i = 1, #s, 2 do
      set(s[i], s[i + 1])
    end
  end
  local a = f.add
  if a then
    local have = ngx.req.get_headers(100)
    for i = 1, #a, 2 do
      local name, v = a[i], a[i + 1]
      local cur = have[name]
      if cur == nil then
        set(name, v)
      elseif type(cur) == "table" then
        local all = { unpack(cur) }
        all[#all + 1] = v
        set(name, all)
      else
        set(name, { cur, v })
      end
    end
  end
  local rm = f.remove
  if rm then
    for i = 1, #rm do
      ngx.req.clear_header(rm[i])
    end
  end
end

return _M

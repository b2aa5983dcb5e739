-- headers.lua: the request and response headers of routes and hosts
-- (proxy-set-headers, add-headers and custom-headers), validated again here.
--
-- A header list is the wire's object {name = value}; compile turns it into
-- an array {name1, value1, name2, value2, ...} sorted by lower-cased name.
--
-- Request headers are set in the rewrite phase (apply_request), before the
-- request is proxied. Response headers are set in header_filter_by_lua
-- (filter, through phases.lua's header_filter), which nginx runs for every response of the public server: the
-- router marks the responses that get some by putting the number of their
-- compiled list in $ingress_response_headers, so that a response without
-- any costs one variable read. A number, not ngx.ctx: ngx.exec to the
-- proxy locations clears ngx.ctx but keeps variables.

local ngx = ngx
local nvar = require("nvar")
local var_get, var_set = nvar.get, nvar.set
local type = type
local pairs = pairs
local tostring = tostring
local str_find = string.find
local str_lower = string.lower
local table_sort = table.sort
local concat = table.concat

local _M = {}

local MAX_HEADERS = 100
local MAX_VALUE = 4096

-- is_token: an RFC 7230 token of at most 256 characters.
local function is_token(s)
  return type(s) == "string" and #s > 0 and #s <= 256 and not str_find(s, "[^%w!#$%%&'*+%-.^_`|~]")
end

-- is_value: printable ASCII and tabs, not empty.
local function is_value(s)
  return type(s) == "string" and #s > 0 and #s <= MAX_VALUE and not str_find(s, "[^\t\32-\126]")
end

_M.is_token, _M.is_value = is_token, is_value

-- compile validates a header object and returns its array, nil for an
-- absent or empty one, or nil and an error.
function _M.compile(h, what)
  if h == nil then
    return nil
  end
  if type(h) ~= "table" then
    return nil, what .. " must be an object"
  end
  local names, n = {}, 0
  for k, v in pairs(h) do
    if not is_token(k) or not is_value(v) then
      return nil, what .. ": invalid header " .. tostring(k)
    end
    n = n + 1
    names[n] = k
  end
  if n == 0 then
    return nil
  end
  if n > MAX_HEADERS then
    return nil, what .. ": more than " .. MAX_HEADERS .. " headers"
  end
  table_sort(names, function(a, b) return str_lower(a) < str_lower(b) end)
  local out = {}
  for i = 1, n do
    if i > 1 and str_lower(names[i]) == str_lower(names[i - 1]) then
      return nil, what .. ": header " .. names[i] .. " given twice"
    end
    out[2 * i - 1], out[2 * i] = names[i], h[names[i]]
  end
  return out
end

-- Compiled response lists by number. Values are weak: a list lives as long
-- as a route holds it. Equal lists (the same host recompiled) keep their
-- number, so that a response routed before a recompilation still finds
-- its headers.
local by_id = setmetatable({}, { __mode = "v" })
local id_of, known = {}, 0
local ids = 0

local function register(list)
  local sig = concat(list, "\0")
  if list.add or list.remove then
    sig = sig .. "\1" .. concat(list.add or {}, "\0") .. "\1" .. concat(list.remove or {}, "\0")
  end
  local id = id_of[sig]
  if not id then
    if known >= 10000 then -- bound id_of: old lists get new numbers
      id_of, known = {}, 0
    end
    ids, known = ids + 1, known + 1
    id = tostring(ids)
    id_of[sig] = id
  end
  local cur = by_id[id]
  if cur then
    return cur
  end
  list.id = id
  by_id[id] = list
  return list
end

-- merge returns the response list of a route: the host's (add-headers)
-- with the route's (custom-headers) over it, registered; nil when empty.
local function merge(host_list, route_list)
  if not route_list then
    return host_list and register(host_list)
  end
  if not host_list then
    return register(route_list)
  end
  local merged, seen, n = {}, {}, 0
  for i = 1, #route_list, 2 do
    seen[str_lower(route_list[i])] = true
  end
  for i = 1, #host_list, 2 do
    if not seen[str_lower(host_list[i])] then
      merged[n + 1], merged[n + 2], n = host_list[i], host_list[i + 1], n + 2
    end
  end
  for i = 1, #route_list do
    merged[n + i] = route_list[i]
  end
  return register(merged)
end

-- response returns the response list of a route: the host's (add-headers)
-- with the route's (custom-headers) over it, and the route's filter f
-- (filters.lua: its set over both, then its add and remove), registered;
-- nil when empty.
function _M.response(host_list, route_list, f)
  if not f then
    return merge(host_list, route_list)
  end
  local own = route_list
  if f.set then
    own = {}
    local over = {}
    for i = 1, #f.set, 2 do
      over[str_lower(f.set[i])] = true
    end
    for i = 1, #(route_list or {}), 2 do
      if not over[str_lower(route_list[i])] then
        own[#own + 1], own[#own + 2] = route_list[i], route_list[i + 1]
      end
    end
    for i = 1, #f.set do
      own[#own + 1] = f.set[i]
    end
  end
  local list = {}
  local base = merge(host_list, own)
  for i = 1, #(base or {}) do
    list[i] = base[i]
  end
  list.add, list.remove = f.add, f.remove
  return register(list)
end

-- apply_request sets a request header list on the request to the backend.
function _M.apply_request(list)
  local set = ngx.req.set_header
  for i = 1, #list, 2 do
    set(list[i], list[i + 1])
  end
end

-- mark makes the response of this request get list (from _M.response).
function _M.mark(list)
  var_set("ingress_response_headers", list.id)
end

-- filter runs in header_filter_by_lua: the marked list, if any.
function _M.filter()
  local id = var_get("ingress_response_headers")
  if id == "" or id == nil then
    return
  end
  local list = by_id[id]
  if not list then
    return
  end
  local header = ngx.header
  for i = 1, #list, 2 do
    header[list[i]] = list[i + 1]
  end
  if list.add or list.remove then
    _M.filter_more(header, list)
  end
end

-- filter_more applies the add and remove of a Gateway API response
-- header filter: add appends a value to those the name has.
function _M.filter_more(header, list)
  local add = list.add
  if add then
    for i = 1, #add, 2 do
      local name, v = add[i], add[i + 1]
      local cur = header[name]
      if cur == nil then
        header[name] = v
      elseif type(cur) == "table" then
        cur[#cur + 1] = v
        header[name] = cur
      else
        header[name] = { cur, v }
      end
    end
  end
  local rm = list.remove
  if rm then
    for i = 1, #rm do
      header[rm[i]] = nil
    end
  end
end

return _M

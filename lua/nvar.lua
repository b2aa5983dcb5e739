-- nvar.lua: nginx variables and clocks read by plain function calls, for
-- the code every request runs.
--
-- ngx.var reads and writes go through the __index and __newindex
-- metamethods of resty.core.var. The LuaJIT nginx runs with on Debian
-- (libluajit2, OpenResty's branch of 2023) cannot compile a trace that
-- starts in such a metamethod and ends in a tail call ("NYI: return to
-- lower frame"), so after a dozen tries it blacklists the function;
-- from then on every trace that reaches a variable read aborts
-- ("blacklisted at var.lua"), and the router, balancer and log phases run in
-- the interpreter. ngx.now, ngx.time and ngx.req.start_time end in a tail
-- call of tonumber, which that LuaJIT cannot record either ("leaving loop
-- in root trace"), with the same effect. The same FFI calls made from plain
-- functions, each ending in a plain return, compile.
--
-- So request code uses this module, never ngx.var, ngx.now, ngx.time or
-- ngx.req.start_time (lua/nvar_test.go checks the sources, and
-- TestRequestPathCompiles in pkg/nginx the traces of real traffic):
--   get(name)      the variable's value as a string; nil when it is not
--                  found or not set
--   set(name, v)   sets a variable declared with "set" in nginx.conf (v nil:
--                  not found, as ngx.var.name = nil)
--   now(), time()  ngx.now() and ngx.time(): the cached clock
--   start_time()   ngx.req.start_time()
-- get, set and start_time raise an error outside a request, as ngx.var does.
--
-- Hot functions here and in the other modules also avoid what that LuaJIT
-- aborts a trace on: a final "return f(...)" of a builtin, and a loop in a
-- function every request enters (a loop that usually ends in its first
-- round is written with that round before it).

local ffi = require("ffi")
local base = require("resty.core.base")
require("resty.core.var") -- declares the variable functions
require("resty.core.time") -- and the clock ones
require("resty.core.request") -- and the request start time

local C = ffi.C
local ffi_str = ffi.string
local get_request = base.get_request
local get_size_ptr = base.get_size_ptr
local get_string_buf = base.get_string_buf
local error = error
local tostring = tostring
local tonumber = tonumber
local type = type

local ERR_BUF_SIZE = 256
local NGX_OK, NGX_ERROR, NGX_DECLINED = 0, -1, -5

local value_ptr = ffi.new("char *[1]")
local errmsg = base.get_errmsg_ptr()

local _M = {}

-- request returns the current request; outside one it raises an error
-- blaming the caller of get, set or start_time.
local function request()
  local r = get_request()
  if not r then
    error("no request found", 3)
  end
  return r
end

function _M.get(name)
  local r = request()
  local len = get_size_ptr()
  local rc = C.ngx_http_lua_ffi_var_get(r, name, #name, get_string_buf(#name), 0, value_ptr, len, errmsg)
  if rc == NGX_OK then
    local v = ffi_str(value_ptr[0], len[0])
    return v
  end
  if rc == NGX_DECLINED then
    return nil
  end
  error(ffi_str(errmsg[0]), 2)
end

function _M.set(name, value)
  local r = request()
  local len = 0
  if value ~= nil then
    if type(value) ~= "string" then
      value = tostring(value)
    end
    len = #value
  end
  local n = #name
  local errlen = get_size_ptr()
  errlen[0] = ERR_BUF_SIZE
  local buf = get_string_buf(n + ERR_BUF_SIZE)
  local rc = C.ngx_http_lua_ffi_var_set(r, name, n, buf, value, len, buf + n, errlen)
  if rc == NGX_ERROR then
    error(ffi_str(buf + n, errlen[0]), 2)
  end
end

function _M.now()
  local t = tonumber(C.ngx_http_lua_ffi_now())
  return t
end

function _M.time()
  local t = tonumber(C.ngx_http_lua_ffi_time())
  return t
end

function _M.start_time()
  local r = request()
  local t = tonumber(C.ngx_http_lua_ffi_req_start_time(r))
  return t
end

return _M

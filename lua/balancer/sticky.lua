-- balancer/sticky.lua: cookie session affinity, as ingress-nginx v1.15
-- (affinity: cookie). The cookie's value is "<key>|<backend key>", the
-- backend key being md5(md5(name) .. name):
--
--   balanced    the key is random; it is hashed onto the current endpoints
--               (balancer/chash's ring), so a change of endpoints moves
--               some clients, without a new cookie;
--   persistent  the key is md5(name .. "address:port") of the endpoint; a
--               client moves only when its endpoint is gone.
--
-- A request without a cookie that names an endpoint gets one at random
-- and a Set-Cookie. When its endpoint fails, a retry goes to the same
-- endpoint again, unless changeOnFailure: then to another one that has not
-- failed in this request, with a new cookie.
--
-- Set-Cookie: name=value; Expires=..; Max-Age=..; Domain=..; Path=..;
-- Secure; HttpOnly; SameSite=.. (in this order). Secure when cookieSecure
-- or the request is HTTPS; SameSite=None is left out for browsers that
-- reject it when conditionalSameSiteNone.

local chash = require("balancer.chash")
local nvar = require("nvar")
local var_get = nvar.get

local ngx = ngx
local md5 = ngx.md5
local random = math.random
local str_find = string.find
local str_sub = string.sub
local str_format = string.format
local str_gmatch = string.gmatch

local MAX_KEY_TRIES = 20

local _M = {}
local mt = { __index = _M }

function _M.backend_key(name)
  return md5(md5(name) .. name)
end

function _M.new(endpoints, item)
  local a = item.affinity
  local o = {
    endpoints = endpoints, n = #endpoints,
    bkey = _M.backend_key(item.name),
    persistent = a.mode == "persistent",
    change_on_failure = a.changeOnFailure == true,
    cookie_var = "cookie_" .. a.cookieName,
    prefix = a.cookieName .. "=",
    expires = a.cookieExpires,
    secure = a.cookieSecure == true,
    same_site = a.cookieSameSite,
    conditional = a.conditionalSameSiteNone == true and a.cookieSameSite == "None",
  }
  local attrs = ""
  if a.cookieMaxAge then
    attrs = attrs .. "; Max-Age=" .. a.cookieMaxAge
  end
  if a.cookieDomain then
    attrs = attrs .. "; Domain=" .. a.cookieDomain
  end
  o.attrs = attrs .. "; Path=" .. (a.cookiePath or "/")
  if o.persistent then
    local by_key, keys = {}, {}
    for i = 1, #endpoints do
      local ep = endpoints[i]
      local k = md5(item.name .. ep.address .. ":" .. ep.port)
      by_key[k], keys[ep] = ep, k
    end
    o.by_key, o.keys = by_key, keys
  elseif #endpoints > 0 then
    o.ring = chash.ring(endpoints)
  end
  return setmetatable(o, mt)
end

-- cookie returns the key and the backend key of the request's cookie.
function _M:cookie()
  local v = var_get(self.cookie_var)
  if not v or v == "" then
    return nil
  end
  local bar = str_find(v, "|", 1, true)
  if not bar then
    return v, nil
  end
  return str_sub(v, 1, bar - 1), str_sub(v, bar + 1)
end

-- affinitized reports whether the request's cookie was set by this
-- backend (see canary.lua).
function _M:affinitized()
  local _, bk = self:cookie()
  return bk == self.bkey
end

-- from_cookie returns the endpoint the cookie names, or nil.
function _M:from_cookie()
  local key = self:cookie()
  if not key then
    return nil
  end
  if self.persistent then
    return self.by_key[key]
  end
  return self.ring:owner(key)
end

-- same_site_none_ok reports whether the browser takes SameSite=None
-- (Chrome 51 to 66 and iOS 12 / macOS 10.14 Safari reject it).
local function same_site_none_ok(ua)
  if not ua then
    return true
  end
  if str_find(ua, "Chrome/[456]") or str_find(ua, "CPU iPhone OS 12", 1, true)
      or str_find(ua, "iPad; CPU OS 12", 1, true) then
    return false
  end
  return not (str_find(ua, "Macintosh", 1, true) and str_find(ua, "Intel Mac OS X 10_14", 1, true)
    and str_find(ua, "Safari", 1, true) and not str_find(ua, "Chrome", 1, true))
end

function _M:set_cookie(key)
  local v = self.prefix .. key .. "|" .. self.bkey
  if self.expires then
    v = v .. "; Expires=" .. ngx.cookie_time(nvar.time() + self.expires)
  end
  v = v .. self.attrs
  if self.secure or var_get("https") == "on" then
    v = v .. "; Secure"
  end
  v = v .. "; HttpOnly"
  if self.same_site and not (self.conditional and not same_site_none_ok(var_get("http_user_agent"))) then
    v = v .. "; SameSite=" .. self.same_site
  end
  ngx.header["Set-Cookie"] = v
end

-- failed returns the set of "host:port" that failed in this request.
local function failed()
  local set = {}
  local addrs = var_get("upstream_addr")
  if addrs then
    for a in str_gmatch(addrs, "[^%s,:]+:%d+") do
      set[a] = true
    end
    for a in str_gmatch(addrs, "%[[^%]]+%]:%d+") do
      set[a] = true
    end
  end
  return set
end

-- new_key picks an endpoint that is not in skip and its key, or nil.
function _M:new_key(skip)
  if self.persistent then
    local list = {}
    for i = 1, self.n do
      local ep = self.endpoints[i]
      if not skip[ep.id] then
        list[#list + 1] = ep
      end
    end
    if #list == 0 then
      return nil
    end
    local ep = list[random(#list)]
    return ep, self.keys[ep]
  end
  local now, pid = nvar.now(), ngx.worker.pid()
  for i = 1, MAX_KEY_TRIES do
    local key = str_format("%s.%s.%s", now + i, pid, random(999999))
    local ep = self.ring:owner(key)
    if not skip[ep.id] then
      return ep, key
    end
  end
  return nil
end

-- assign moves the client to a new endpoint and sets its cookie.
function _M:assign(skip)
  local ep, key = self:new_key(skip)
  if not ep then
    return self.endpoints[random(self.n)] -- every endpoint failed: no cookie
  end
  self:set_cookie(key)
  return ep
end

local NONE = {}

function _M:pick()
  return self:from_cookie() or self:assign(NONE)
end

-- retry: the cookie's endpoint again, unless changeOnFailure (or there is
-- none): another one, with a new cookie.
function _M:retry()
  if not self.change_on_failure then
    local ep = self:from_cookie()
    if ep then
      return ep
    end
  end
  return self:assign(failed())
end

return _M

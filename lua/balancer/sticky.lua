-- balancer/sticky.lua: cookie session affinity. The cookie holds the MD5 of
-- the endpoint's "address:port"; a request without a valid cookie gets an
-- endpoint by round robin and a Set-Cookie for it.

local round_robin = require("balancer.round_robin")

local _M = {}
local mt = { __index = _M }

function _M.new(endpoints, affinity, old)
  local by_key, keys = {}, {}
  for i = 1, #endpoints do
    local ep = endpoints[i]
    local k = ngx.md5(ep.id)
    by_key[k], keys[ep] = ep, k
  end
  local attrs = "; Path=" .. (affinity.cookiePath or "/")
  if affinity.cookieMaxAge then
    attrs = attrs .. "; Max-Age=" .. affinity.cookieMaxAge
  end
  return setmetatable({
    by_key = by_key, keys = keys,
    cookie_var = "cookie_" .. affinity.cookieName,
    prefix = affinity.cookieName .. "=",
    attrs = attrs .. "; HttpOnly",
    rr = round_robin.new(endpoints, old and old.rr),
  }, mt)
end

function _M:assign()
  local ep = self.rr:pick()
  ngx.header["Set-Cookie"] = self.prefix .. self.keys[ep] .. self.attrs
  return ep
end

function _M:pick()
  local v = ngx.var[self.cookie_var]
  local ep = v and self.by_key[v]
  if ep then
    return ep
  end
  return self:assign()
end

-- retry moves the client to another endpoint (the sticky one failed).
function _M:retry()
  return self:assign()
end

return _M

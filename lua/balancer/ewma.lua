-- balancer/ewma.lua: peak exponentially weighted moving average of the
-- upstream response time, with the power of two choices: pick two endpoints
-- at random and use the one with the lower score. A score decays while the
-- endpoint is not used, so that a slow endpoint is probed again later.
-- Statistics are per worker.

local nvar = require("nvar")
local exp = math.exp
local random = math.random
local tonumber = tonumber

local DECAY = 10 -- seconds

local _M = {}
local mt = { __index = _M }

-- new returns a balancer over endpoints, keeping the statistics of old for
-- the endpoints that remain.
function _M.new(endpoints, old)
  local stats = {}
  if old then
    for i = 1, #endpoints do
      local id = endpoints[i].id
      stats[id] = old.stats[id]
    end
  end
  return setmetatable({ endpoints = endpoints, n = #endpoints, stats = stats }, mt)
end

local function score(s, now)
  if not s then
    return 0
  end
  return s.ewma * exp(-(now - s.t) / DECAY)
end

function _M:pick()
  local n = self.n
  if n == 1 then
    return self.endpoints[1]
  end
  local i = random(n)
  local j = random(n - 1)
  if j >= i then
    j = j + 1
  end
  local a, b = self.endpoints[i], self.endpoints[j]
  local now = nvar.now()
  if score(self.stats[a.id], now) <= score(self.stats[b.id], now) then
    return a
  end
  return b
end

_M.retry = _M.pick

local function last(list)
  if not list then
    return nil
  end
  return list:match("([^,%s]+)%s*$")
end

-- observe records the response time of the endpoint that answered, from
-- $upstream_addr and $upstream_response_time (comma separated on retries).
function _M:observe(addrs, times)
  local id, rt = last(addrs), tonumber(last(times))
  if not id or not rt then
    return
  end
  local now = nvar.now()
  local s = self.stats[id]
  if not s then
    for i = 1, self.n do
      if self.endpoints[i].id == id then
        self.stats[id] = { ewma = rt, t = now }
      end
    end
    return
  end
  if rt > s.ewma then
    s.ewma = rt
  else
    local w = exp(-(now - s.t) / DECAY)
    s.ewma = s.ewma * w + rt * (1 - w)
  end
  s.t = now
end

return _M

-- balancer/round_robin.lua: round robin over a backend's endpoints. Each
-- worker starts at a random index so that workers do not move in step.

local _M = {}
local mt = { __index = _M }

-- new returns a balancer over endpoints, keeping the position of old.
function _M.new(endpoints, old)
  local n = #endpoints
  local idx = old and old.idx or (n > 0 and math.random(n) - 1 or 0)
  return setmetatable({ endpoints = endpoints, n = n, idx = idx }, mt)
end

function _M:pick()
  local i = self.idx % self.n + 1
  self.idx = i
  return self.endpoints[i]
end

-- retry picks the next endpoint: round robin never picks the same one twice
-- in a row when there are several.
_M.retry = _M.pick

return _M

-- Garbage collection: many short-lived tables and strings, weak tables, finalizers.
local scale = tonumber(arg[1]) or 1
local live = {}
local created = 0
for i = 1, 50000 * scale do
  local t = { i, tostring(i), { i * 2 } }
  created = created + 1
  if i % 100 == 0 then live[#live + 1] = t end
end
collectgarbage("collect")
print("created", created, "kept", #live)
local weak = setmetatable({}, { __mode = "k" })
for i = 1, 1000 do weak[{}] = i end
local strong = {}
for i = 1, 10 do local k = {}; strong[i] = k; weak[k] = i end
collectgarbage("collect")
local remaining = 0
for _ in pairs(weak) do remaining = remaining + 1 end
print("weak remaining", remaining)
local finalized = 0
for i = 1, 200 do setmetatable({}, { __gc = function() finalized = finalized + 1 end }) end
collectgarbage("collect")
collectgarbage("collect")
print("finalized", finalized)
local pieces = {}
for i = 1, 20000 * scale do pieces[i % 1000 + 1] = (pieces[i % 1000 + 1] or "") .. string.char(65 + i % 26) end
local len = 0
for i = 1, #pieces do len = len + #pieces[i] end
print("string churn", len)
collectgarbage("generational")
local gen = {}
for i = 1, 30000 * scale do gen[i % 500] = { i } end
collectgarbage("incremental")
print("modes ok", #gen)

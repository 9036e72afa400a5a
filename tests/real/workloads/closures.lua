-- Closures, upvalues, recursion, varargs, coroutines, pcall/error.
local scale = tonumber(arg[1]) or 1
local function counter(start)
  local value = start
  return function(step) value = value + (step or 1); return value end
end
local counters = {}
for i = 1, 100 do counters[i] = counter(i) end
local total = 0
for round = 1, 200 * scale do
  for i = 1, #counters do total = total + counters[i](round % 3) end
end
print("counters", total)
local function compose(...)
  local fs = { ... }
  return function(x) for i = #fs, 1, -1 do x = fs[i](x) end return x end
end
local f = compose(function(x) return x + 1 end, function(x) return x * 2 end, function(x) return x - 3 end)
local s = 0
for i = 1, 10000 * scale do s = s + f(i) end
print("compose", s)
local memo = {}
local function fib(n)
  if n < 2 then return n end
  if memo[n] then return memo[n] end
  local v = fib(n - 1) + fib(n - 2)
  memo[n] = v
  return v
end
print("fib", fib(80))
local function slow_fib(n) if n < 2 then return n end return slow_fib(n - 1) + slow_fib(n - 2) end
print("slow fib", slow_fib(20 + scale))
local producer = coroutine.wrap(function()
  for i = 1, 1000 * scale do coroutine.yield(i * i % 97) end
  return nil
end)
local csum = 0
while true do local v = producer(); if not v then break end csum = csum + v end
print("coroutine", csum)
local ok, message = pcall(function() error({ code = 42 }) end)
print("pcall", ok, type(message), message.code)
local ok2, message2 = pcall(function() local t = nil; return t.field end)
print("pcall2", ok2, (message2:gsub("^.-:%d+: ", "")))
print("select", select("#", 1, nil, 3), select(2, "a", "b", "c"))

-- Lua benchmark: recursion, table churn, string building, closures. arg[1] scales the work.
local n = tonumber(arg[1]) or 1
local function fib(k) if k < 2 then return k end return fib(k - 1) + fib(k - 2) end
local checksum = 0
for round = 1, n do
  checksum = checksum + fib(24)
  local t = {}
  for i = 1, 20000 do t[i] = (i * 7919) % 10007 end
  table.sort(t)
  local words = {}
  for i = 1, 3000 do words[#words + 1] = string.format("%d:%s", t[i], ("x"):rep(i % 5)) end
  local s = table.concat(words, ",")
  for w in s:gmatch("%d+") do checksum = checksum + #w end
  local acc = 0
  local function add(x) acc = acc + x end
  for i = 1, 20000 do add(i % 13) end
  checksum = (checksum + acc) % 1000000007
end
print(checksum)

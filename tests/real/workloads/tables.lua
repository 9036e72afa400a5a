-- Tables: arrays, hashes, sort with comparators, insert/remove, metatables, next.
local scale = tonumber(arg[1]) or 1
local n = 20000 * scale
local array = {}
local seed = 12345
local function random()
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed
end
for i = 1, n do array[i] = random() % 100000 end
table.sort(array)
local sum = 0
for i = 1, #array, 97 do sum = sum + array[i] end
print("sorted", #array, array[1], array[#array], sum)
local records = {}
for i = 1, n // 4 do records[i] = { id = i, key = random() % 1000, name = "r" .. (random() % 500) } end
table.sort(records, function(a, b) if a.key ~= b.key then return a.key < b.key end return a.id < b.id end)
print("records", records[1].id, records[1].key, records[#records].id, records[#records].key)
local counts = {}
for _, r in ipairs(records) do counts[r.name] = (counts[r.name] or 0) + 1 end
local names = {}
for name in pairs(counts) do names[#names + 1] = name end
table.sort(names)
local top = {}
for i = 1, 5 do top[i] = names[i] .. "=" .. counts[names[i]] end
print("names", #names, table.concat(top, " "))
for i = 1, 1000 do table.insert(array, 1, i) end
for i = 1, 500 do table.remove(array, 1) end
print("after insert/remove", #array, array[1], array[600])
local Vector = {}
Vector.__index = Vector
Vector.__add = function(a, b) return setmetatable({ x = a.x + b.x, y = a.y + b.y }, Vector) end
Vector.__tostring = function(v) return "(" .. v.x .. "," .. v.y .. ")" end
function Vector.new(x, y) return setmetatable({ x = x, y = y }, Vector) end
function Vector:length2() return self.x * self.x + self.y * self.y end
local acc = Vector.new(0, 0)
for i = 1, n // 10 do acc = acc + Vector.new(i % 7, -(i % 3)) end
print("vector", tostring(acc), acc:length2())
local default = setmetatable({}, { __index = function(t, k) return k * 2 end })
print("default", default[21], rawget(default, 21))
print("concat", table.concat({ 1, 2, 3, "x", 4.5 }, "-"), select("#", table.unpack({ 1, 2, nil, 4 }, 1, 4)))

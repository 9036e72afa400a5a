-- String operations: building, formatting, patterns, gsub, byte/char, rep, reverse.
local scale = tonumber(arg[1]) or 1
local parts = {}
for i = 1, 2000 * scale do
  parts[#parts + 1] = string.format("%05d:%s:%x", i, string.rep(string.char(97 + i % 26), i % 7 + 1), i * 2654435761 % 4294967296)
end
local text = table.concat(parts, ",")
print("length", #text)
local count, digits = 0, 0
for word in text:gmatch("%a+") do count = count + 1 end
for d in text:gmatch("%d") do digits = digits + tonumber(d) end
print("words", count, "digit sum", digits)
local replaced, n = text:gsub("(%d+):(%a+)", function(num, letters) return letters:upper() .. num:sub(-2) end)
print("gsub", n, #replaced, replaced:sub(1, 60))
local h = 0
for i = 1, #replaced, 3 do h = (h * 31 + replaced:byte(i)) % 2147483647 end
print("hash", h)
print("reverse", ("vigil monitors programs"):reverse(), ("%q"):format("a\nb\"c"))
local found = {}
for k, v in string.gmatch("alpha=1, beta=22, gamma=333, delta=4444", "(%w+)=(%w+)") do found[#found + 1] = k .. "->" .. #v end
print(table.concat(found, " "))
print(string.format("%10.4f|%-8s|%+d|%e|%g", math.pi, "left", 42, 12345.678, 0.0001))
local utf = "héllo wörld ☃"
print("utf8", utf8.len(utf), #utf)

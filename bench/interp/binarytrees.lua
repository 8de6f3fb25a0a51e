local function make(d) if d == 0 then return {} else return {make(d - 1), make(d - 1)} end end
local function check(t) if t[1] then return 1 + check(t[1]) + check(t[2]) else return 1 end end
local acc = 0
for i = 1, 40 do acc = acc + check(make(14)) end
print(acc + check(make(16)))

local function compose(f, g) return function(x) return f(g(x)) end end
local function adder(n) return function(x) return x + n end end
local function loop(i, acc)
  while i > 0 do
    local j = i
    local f = compose(adder(i), adder(1))
    local g = compose(f, function(y) return y - j end)
    acc = g(acc) - 1
    i = i - 1
  end
  return acc
end
print(loop(1000000, 0))

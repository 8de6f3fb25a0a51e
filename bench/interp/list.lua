local function build(n) local acc = nil; while n > 0 do acc = {n, acc}; n = n - 1 end; return acc end
local function rev_map(f, xs) local acc = nil; while xs do acc = {f(xs[1]), acc}; xs = xs[2] end; return acc end
local function foldl(f, acc, xs) while xs do acc = f(acc, xs[1]); xs = xs[2] end; return acc end
local xs = build(1000000)
local ys = rev_map(function(x) return x * 3 + 1 end, xs)
print(foldl(function(a, b) return a + (b - b // 7 * 7) end, 0, ys))

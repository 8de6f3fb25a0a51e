def build(n):
    acc = None
    while n:
        acc = (n, acc); n -= 1
    return acc
def rev_map(f, xs):
    acc = None
    while xs is not None:
        acc = (f(xs[0]), acc); xs = xs[1]
    return acc
def foldl(f, acc, xs):
    while xs is not None:
        acc = f(acc, xs[0]); xs = xs[1]
    return acc
xs = build(1000000)
ys = rev_map(lambda x: x * 3 + 1, xs)
print(foldl(lambda a, b: a + (b - b // 7 * 7), 0, ys))

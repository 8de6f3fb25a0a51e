def compose(f, g):
    return lambda x: f(g(x))
def adder(n):
    return lambda x: x + n
def loop(i, acc):
    while i:
        f = compose(adder(i), adder(1))
        g = compose(f, lambda y, i=i: y - i)
        acc = g(acc) - 1
        i -= 1
    return acc
print(loop(1000000, 0))

import sys
sys.setrecursionlimit(100000)
def tak(x, y, z):
    return tak(tak(x - 1, y, z), tak(y - 1, z, x), tak(z - 1, x, y)) if y < x else z
def ack(m, n):
    if m == 0: return n + 1
    if n == 0: return ack(m - 1, 1)
    return ack(m - 1, ack(m, n - 1))
print((tak(22, 16, 8), ack(2, 2000)))

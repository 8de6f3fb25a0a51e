def make(d):
    return (None, None) if d == 0 else (make(d - 1), make(d - 1))
def check(t):
    l, r = t
    return 1 if l is None else 1 + check(l) + check(r)
acc = 0
for i in range(40):
    acc += check(make(14))
print(acc + check(make(16)))

def it(cr, ci):
    zr = zi = 0.0
    for k in range(100):
        if zr * zr + zi * zi > 4.0:
            return 0
        zr, zi = zr * zr - zi * zi + cr, 2.0 * zr * zi + ci
    return 1
acc = 0
for y in range(200):
    for x in range(200):
        acc += it(x * 0.015 - 2.0, y * 0.015 - 1.5)
print(acc)

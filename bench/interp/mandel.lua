local function it(cr, ci)
  local zr, zi = 0.0, 0.0
  for k = 0, 99 do
    if zr * zr + zi * zi > 4.0 then return 0 end
    zr, zi = zr * zr - zi * zi + cr, 2.0 * zr * zi + ci
  end
  return 1
end
local acc = 0
for y = 0, 199 do for x = 0, 199 do acc = acc + it(x * 0.015 - 2.0, y * 0.015 - 1.5) end end
print(acc)

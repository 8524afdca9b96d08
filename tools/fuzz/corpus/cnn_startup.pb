cnn_startupÐ
conv1.w"(
conv1.b"(
conv2.w"(
conv2.b"(
fc.w"
(
fc.b"
(H
gaussian_random
Outconv1.w"
shapeZ
"

stdé&ñ>"
seed-
fill_constant
Outconv1.b"
shapeZ
H
gaussian_random
Outconv2.w"
shapeZ
"

std+>"
seed-
fill_constant
Outconv2.b"
shapeZ
C
gaussian_random
Outfc.w"
shapeZ

"

std}?µ>"
seed*
fill_constant
Outfc.b"
shapeZ


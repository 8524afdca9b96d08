cnn¨
image"ÿÿÿÿÿÿÿÿÿ@
conv1.w"(
conv1.b"(
conv2.w"(
conv2.b"(
fc.w"
(
fc.b"
(>
reshape

Ximage
Outplanes"
shapeZ
ÿÿÿÿÿÿÿÿÿ`
conv2d
Inputplanes
Filterconv1.w
Biasconv1.b
Outputconv1"
paddings:
%
relu

Xconv1
Out
conv1.relu\
pool2d
X
conv1.relu
Outpool1"
pooling_type"max"
ksize:
"
strides:
_
conv2d
Inputpool1
Filterconv2.w
Biasconv2.b
Outputconv2"
paddings:
%
relu

Xconv2
Out
conv2.relu_
pool2d
X
conv2.relu
Outpool2"
pooling_type"avg"
ksize:
"
global_pooling(&
flatten

Xpool2
Outfeatures;
fc
Xfeatures	
Wfc.w
Biasfc.b
Outlogits,
softmax
Xlogits
Outprobabilities
mlp²
image"ÿÿÿÿÿÿÿÿÿ@
fc1.w"@ (
fc1.b" (
fc2.w" 
(
fc2.b"
(
hidden"ÿÿÿÿÿÿÿÿÿ 
hidden.relu"ÿÿÿÿÿÿÿÿÿ 
logits"ÿÿÿÿÿÿÿÿÿ

probabilities"ÿÿÿÿÿÿÿÿÿ
:
fc

Ximage

Wfc1.w
Biasfc1.b
Outhidden'
relu
Xhidden
Outhidden.relu@
fc
Xhidden.relu

Wfc2.w
Biasfc2.b
Outlogits?
softmax
Xlogits
Outprobabilities"
axisÿÿÿÿÿÿÿÿÿ
"""A gRPC client of `scopeflow serve --grpc_port`, in Python: Debian's
python3-grpcio and protobuf, with message classes protoc makes from the
.proto files of proto/ (as a client would make them from the originals).

Usage: serve_grpc_client_test.py PORT PROTO_ROOT_PARENT
Calls KServe v2's ModelReady and ModelInfer and TensorFlow Serving's
Predict on model "b" (the MLP: image float32 [N, 64] -> probabilities
[N, 10]) and checks the replies agree; prints PASS.
"""
import os
import struct
import subprocess
import sys
import tempfile

import grpc


def main():
    port, root = sys.argv[1], sys.argv[2]
    out = tempfile.mkdtemp()
    protos = [os.path.join(root, "kserve", "grpc_predict_v2.proto")] + [
        os.path.join(root, "tfserving", name)
        for name in ("apis.proto", "signature.proto", "tensor.proto")
    ]
    subprocess.run(["protoc", "--proto_path=.", "--python_out=" + out] + protos,
                   check=True)
    sys.path.insert(0, out)
    from proto.kserve import grpc_predict_v2_pb2 as kserve
    from proto.tfserving import apis_pb2 as tfs
    from proto.tfserving import tensor_pb2 as tf

    channel = grpc.insecure_channel("127.0.0.1:" + port)

    def call(method, request, reply_class):
        stub = channel.unary_unary(
            method,
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=reply_class.FromString)
        return stub(request, timeout=10)

    ready = call("/inference.GRPCInferenceService/ModelReady",
                 kserve.ModelReadyRequest(name="b"), kserve.ModelReadyResponse)
    assert ready.ready, ready

    image = [((i * 7) % 13) / 13.0 for i in range(2 * 64)]
    infer = kserve.ModelInferRequest(model_name="b", id="py")
    tensor = infer.inputs.add(name="image", datatype="FP32", shape=[2, 64])
    tensor.contents.fp32_contents.extend(image)
    reply = call("/inference.GRPCInferenceService/ModelInfer", infer,
                 kserve.ModelInferResponse)
    assert reply.model_version == "3" and reply.id == "py", reply
    assert list(reply.outputs[0].shape) == [2, 10], reply
    kserve_out = struct.unpack("<20f", reply.raw_output_contents[0])
    for row in range(2):
        total = sum(kserve_out[row * 10:(row + 1) * 10])
        assert abs(total - 1) < 1e-4, ("probabilities sum to", total)

    predict = tfs.PredictRequest()
    predict.model_spec.name = "b"
    proto = predict.inputs["image"]
    proto.dtype = tf.DT_FLOAT
    proto.tensor_shape.dim.add(size=2)
    proto.tensor_shape.dim.add(size=64)
    proto.float_val.extend(image)
    answer = call("/tensorflow.serving.PredictionService/Predict", predict,
                  tfs.PredictResponse)
    assert answer.model_spec.version.value == 3, answer.model_spec
    out_tensor = answer.outputs["probabilities"]
    tf_out = struct.unpack("<20f", out_tensor.tensor_content)
    assert tf_out == kserve_out, (tf_out, kserve_out)

    try:
        call("/inference.GRPCInferenceService/ModelInfer",
             kserve.ModelInferRequest(model_name="nope"),
             kserve.ModelInferResponse)
        raise AssertionError("an unknown model was answered")
    except grpc.RpcError as error:
        assert error.code() == grpc.StatusCode.NOT_FOUND, error
    print("PASS")


if __name__ == "__main__":
    main()

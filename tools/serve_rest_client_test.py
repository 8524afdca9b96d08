"""REST clients of `scopeflow serve` in Python, written as the protocols'
own documentation writes them, with Debian's python3-requests: TensorFlow
Serving's REST tutorial (model status, then a predict of rows with
"signature_name" and "instances", read back from "predictions") and
KServe v2's (server ready, model metadata, then an infer of named tensors
read back from "outputs"), and TF Serving's columnar format.

Usage: serve_rest_client_test.py PORT
Models "a" and "b" are the same MLP (image float32 [N, 64] ->
probabilities [N, 10]); the replies of both protocols must agree and each
row must be probabilities. Prints PASS.
"""
import json
import sys

import requests


def main():
    base = "http://127.0.0.1:" + sys.argv[1]
    images = [[((i * 7 + r * 3) % 13) / 13.0 for i in range(64)]
              for r in range(3)]

    status = requests.get(base + "/v1/models/a", timeout=10).json()
    version = status["model_version_status"][0]
    assert version["state"] == "AVAILABLE", status

    data = json.dumps({"signature_name": "serving_default",
                       "instances": images})
    headers = {"content-type": "application/json"}
    reply = requests.post(base + "/v1/models/a:predict", data=data,
                          headers=headers, timeout=10)
    assert reply.status_code == 200, reply.text
    predictions = json.loads(reply.text)["predictions"]
    assert len(predictions) == 3 and len(predictions[0]) == 10, predictions
    for row in predictions:
        assert abs(sum(row) - 1) < 1e-4, ("probabilities sum to", sum(row))

    columns = requests.post(base + "/v1/models/a:predict",
                            json={"inputs": images}, timeout=10).json()
    assert columns["outputs"] == predictions, columns

    assert requests.get(base + "/v2/health/ready", timeout=10).status_code == 200
    metadata = requests.get(base + "/v2/models/b", timeout=10).json()
    assert metadata["inputs"][0]["name"] == "image", metadata
    assert metadata["inputs"][0]["datatype"] == "FP32", metadata
    request = {"id": "py", "inputs": [{
        "name": "image", "shape": [3, 64], "datatype": "FP32",
        "data": [value for row in images for value in row]}]}
    infer = requests.post(base + "/v2/models/b/infer", json=request,
                          timeout=10)
    assert infer.status_code == 200, infer.text
    answer = infer.json()
    assert answer["id"] == "py" and answer["model_name"] == "b", answer
    output = answer["outputs"][0]
    assert output["name"] == "probabilities" and output["shape"] == [3, 10]
    flat = [value for row in predictions for value in row]
    assert len(output["data"]) == len(flat)
    for got, want in zip(output["data"], flat):
        assert abs(got - want) < 1e-6, (got, want)

    missing = requests.post(base + "/v1/models/nope:predict", data=data,
                            headers=headers, timeout=10)
    assert missing.status_code == 404, missing.text
    assert "error" in missing.json(), missing.text
    print("PASS")


if __name__ == "__main__":
    main()

"""Trainer: the digits MLP of examples/digits learns a separable problem from
batches a Python generator makes."""

import os

import numpy as np
import pytest

import scopeflow


def separable(n, seed):
    """n examples of 64 features whose class (of 10) a fixed linear map
    decides, as the digits MLP's inputs and labels."""
    rng = np.random.default_rng(seed)
    teacher = np.random.default_rng(99).standard_normal((64, 10))
    features = rng.random((n, 64), dtype=np.float32)
    labels = np.argmax(features @ teacher, axis=1).astype(np.int64)
    return features, labels.reshape(n, 1)


def batches(features, labels, size=32):
    for begin in range(0, len(features) - size + 1, size):
        yield {"image": features[begin:begin + size],
               "label": labels[begin:begin + size]}


@pytest.fixture
def digits_nets(examples):
    return (os.path.join(examples, "digits", "mlp_startup.pbtxt"),
            os.path.join(examples, "digits", "mlp.pbtxt"))


def test_loss_decreases(digits_nets):
    startup, main = digits_nets
    trainer = scopeflow.Trainer(startup, main, accuracy="accuracy",
                                optimizer="adam", learning_rate=0.01)
    trainer.initialize()
    train = separable(640, seed=1)
    test = separable(320, seed=2)
    before = trainer.evaluate(batches(*test))
    steps = []
    losses = trainer.fit(lambda: batches(*train), epochs=4,
                         on_step=lambda step, loss: steps.append(step))
    assert len(losses) == 4 * 20 and steps == list(range(1, 81))
    assert trainer.step_count == 80
    assert np.all(np.isfinite(losses))
    assert np.mean(losses[-10:]) < 0.6 * np.mean(losses[:10])
    after = trainer.evaluate(batches(*test))
    assert after["examples"] == 320
    assert after["loss"] < 0.6 * before["loss"]
    assert after["accuracy"] > before["accuracy"] + 0.2
    # Parameters and optimizer state live in the trainer's scope.
    assert "fc1.w" in trainer.scope
    assert trainer.scope.get("fc1.w").shape == (64, 128)
    assert "@STEP" in trainer.state_names


def test_step_returns_the_batch_loss(digits_nets):
    trainer = scopeflow.Trainer(*digits_nets, optimizer="sgd",
                                learning_rate=0.1)
    trainer.initialize()
    features, labels = separable(32, seed=3)
    feeds = {"image": features, "label": labels}
    # The loss of the batch before the update, as the inference net has it.
    before = trainer.evaluate([feeds])["loss"]
    first = trainer.step(feeds)
    assert abs(first - before) < 1e-5
    for _ in range(20):
        last = trainer.step(feeds)
    assert last < 0.8 * first
    assert trainer.step_count == 21


def test_training_errors(digits_nets):
    startup, main = digits_nets
    with pytest.raises(scopeflow.InvalidArgumentError,
                       match='unknown optimizer "adagrad"'):
        scopeflow.Trainer(startup, main, optimizer="adagrad")
    trainer = scopeflow.Trainer(startup, main)
    features, labels = separable(8, seed=4)
    with pytest.raises(scopeflow.Error, match="initialise or resume first"):
        trainer.step_count
    trainer.initialize()
    with pytest.raises(scopeflow.InvalidArgumentError,
                       match='input "label" is not fed'):
        trainer.step({"image": features})
    with pytest.raises(scopeflow.InvalidArgumentError,
                       match='feed "label": expected int64'):
        trainer.step({"image": features, "label": labels.astype(np.int32)})
    one_shot = batches(*separable(64, seed=5))
    with pytest.raises(scopeflow.InvalidArgumentError,
                       match="no batch in epoch 2"):
        trainer.fit(one_shot, epochs=2)

"""Tests of run_zoo.py's comparison of ranked detector outputs."""

import os
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_zoo  # noqa: E402


def detections(scores, labels, boxes):
    return {"scores": np.array(scores, np.float32),
            "labels": np.array(labels, np.int64),
            "boxes": np.array(boxes, np.float32)}


class AlignNearTiesTest(unittest.TestCase):
    def test_rows_of_near_equal_scores_match_in_either_order(self):
        # Rows 1 and 2 differ in score by one float32 ulp, so rounding may
        # order them either way; row 0 is well apart.
        torch = detections([0.9, 0.015110283, 0.015110282], [1, 76, 55],
                           [[0, 0, 1, 1], [0, 27, 29, 116], [6, 144, 42, 253]])
        ours = detections([0.9, 0.015110282, 0.015110283], [1, 55, 76],
                          [[0, 0, 1, 1], [6, 144, 42, 253], [0, 27, 29, 116]])
        aligned = run_zoo.align_near_ties(ours, torch, "scores", 1e-4)
        for name, reference in torch.items():
            rel, problem = run_zoo.compare(aligned[name], reference)
            self.assertIsNone(problem)
            self.assertEqual(rel, 0.0, name)

    def test_rows_of_distinct_scores_keep_their_order(self):
        # A swap between scores far apart is a real difference: it stays.
        torch = detections([0.9, 0.5], [1, 2], [[0, 0, 1, 1], [2, 2, 3, 3]])
        ours = detections([0.5, 0.9], [2, 1], [[2, 2, 3, 3], [0, 0, 1, 1]])
        aligned = run_zoo.align_near_ties(ours, torch, "scores", 1e-4)
        rel, problem = run_zoo.compare(aligned["labels"], torch["labels"])
        self.assertIsNone(problem)
        self.assertGreater(rel, 1e-4)

    def test_outputs_of_other_shapes_are_left_for_compare_to_report(self):
        torch = detections([0.9, 0.5], [1, 2], [[0, 0, 1, 1], [2, 2, 3, 3]])
        ours = detections([0.9], [1], [[0, 0, 1, 1]])
        aligned = run_zoo.align_near_ties(ours, torch, "scores", 1e-4)
        _, problem = run_zoo.compare(aligned["scores"], torch["scores"])
        self.assertIn("shape", problem)


if __name__ == "__main__":
    unittest.main()

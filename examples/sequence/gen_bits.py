#!/usr/bin/env python3
"""Writes the bit-counting data set of examples/sequence: one example per
line, 10 random bits then the number of ones among them (the class, 0..10).
Deterministic: the same seed gives the same file on every machine.

    python3 examples/sequence/gen_bits.py OUT.csv [--rows N] [--seed S]
"""
import argparse
import random


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--rows", type=int, default=4000)
    parser.add_argument("--length", type=int, default=10)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with open(args.out, "w") as out:
        for _ in range(args.rows):
            bits = [rng.randint(0, 1) for _ in range(args.length)]
            out.write(",".join(str(b) for b in bits + [sum(bits)]) + "\n")


if __name__ == "__main__":
    main()

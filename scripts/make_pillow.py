#!/usr/bin/env python3
"""Writes assets/garments/pillow.obj: a pillowcase cut as two square panels, one above the
other, with Codim-IPC `stitch` records that sew each boundary vertex of the upper panel to the
matching vertex of the lower one (sim/stitches.h). The `pillow` scene lays a ball between them.

Usage: scripts/make_pillow.py [OUT]  (default: assets/garments/pillow.obj)
"""
import sys

SIZE = 0.5       # panel side [m]
N = 21           # vertices per side
LOW, HIGH = 0.004, 0.3  # heights of the two panels [m]: below and above the ball


def panel(height, up):
    """Vertices (x, height, z) of an N x N grid and its triangles, facing up or down."""
    step = SIZE / (N - 1)
    verts = [(-SIZE / 2 + i * step, height, -SIZE / 2 + j * step) for j in range(N) for i in range(N)]
    tris = []
    for j in range(N - 1):
        for i in range(N - 1):
            a, b, c, d = j * N + i, j * N + i + 1, (j + 1) * N + i + 1, (j + 1) * N + i
            pair = [(a, c, b), (a, d, c)] if (i + j) % 2 == 0 else [(a, d, b), (b, d, c)]
            for t in pair:
                tris.append(t if up else (t[0], t[2], t[1]))
    return verts, tris


def boundary():
    """Boundary vertex indices of a panel, in order round it."""
    ring = [i for i in range(N)]
    ring += [j * N + N - 1 for j in range(1, N)]
    ring += [(N - 1) * N + i for i in range(N - 2, -1, -1)]
    ring += [j * N for j in range(N - 2, 0, -1)]
    return ring


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "assets/garments/pillow.obj"
    low, low_tris = panel(LOW, up=False)
    high, high_tris = panel(HIGH, up=True)
    offset = len(low)
    with open(out, "w") as f:
        f.write("# ClothLab pillowcase: two %g m panels (%d x %d vertices) sewn round their edges.\n" % (SIZE, N, N))
        f.write("# Made by scripts/make_pillow.py. 'stitch V A B T' sews vertex V to (1 - T) A + T B\n")
        f.write("# (0-based vertex indices, as in Codim-IPC's garments).\n")
        f.write("g lower\n")
        for v in low:
            f.write("v %.6f %.6f %.6f\n" % v)
        for v in high:
            f.write("v %.6f %.6f %.6f\n" % v)
        # The sewing pattern as texture coordinates: the panels side by side, each as it is cut
        # (the lower one seen from below, mirrored), which is the cloth's flat rest state.
        for x, _, z in low:
            f.write("vt %.6f %.6f\n" % (SIZE / 2 - x, z + SIZE / 2))
        for x, _, z in high:
            f.write("vt %.6f %.6f\n" % (x + SIZE / 2 + 1.2 * SIZE, z + SIZE / 2))
        corner = lambda k: "%d/%d" % (k + 1, k + 1)
        for t in low_tris:
            f.write("f %s %s %s\n" % tuple(corner(k) for k in t))
        f.write("g upper\n")
        for t in high_tris:
            f.write("f %s %s %s\n" % tuple(corner(k + offset) for k in t))
        ring = boundary()
        for k, v in enumerate(ring):
            f.write("stitch %d %d %d 0\n" % (v + offset, v, ring[(k + 1) % len(ring)]))


if __name__ == "__main__":
    main()

#version 330 core
// The wireframe's lines, one pixel wide (see wire.geom): a pixel whose centre lies d pixels from
// an edge is covered by about 1 - d of it, and the triangles on both sides draw their half.
noperspective in vec3 vEdgeDistance;
uniform vec4 uColor;
out vec4 fragColor;
void main() {
  float d = min(vEdgeDistance.x, min(vEdgeDistance.y, vEdgeDistance.z));
  float coverage = 1.0 - d;
  if (coverage <= 0.0) discard;
  fragColor = vec4(uColor.rgb, uColor.a * coverage);
}

#version 330 core
// Unlit coloured lines and points: wireframe, ground grid, overlays, markers.
layout(location = 0) in vec3 aPosition;
layout(location = 1) in vec4 aColor;
uniform mat4 uViewProj;
uniform float uPointSize;
uniform float uDepthBias;   // pulls lines toward the eye (clip-space z) so they win over the surface
out vec4 vColor;
void main() {
  gl_Position = uViewProj * vec4(aPosition, 1.0);
  gl_Position.z -= uDepthBias * gl_Position.w;
  gl_PointSize = uPointSize;
  vColor = aColor;
}

#version 330 core
// Wireframe over the cloth, drawn as a second pass of the cloth's own triangles (mesh.vert, whose
// gl_Position is invariant): each fragment gets its distances in pixels to the triangle's three
// edges, and wire.frag keeps the ones near an edge. The pass is depth-tested for equality with
// the lit cloth, so a line shows exactly where its triangle does: never through a fold lying
// over it, never broken up by its own triangle.
layout(triangles) in;
layout(triangle_strip, max_vertices = 3) out;

uniform vec2 uViewport;  // pixels

noperspective out vec3 vEdgeDistance;  // pixels to the edge opposite each corner

void main() {
  vec2 p[3];
  for (int i = 0; i < 3; ++i) p[i] = uViewport * 0.5 * gl_in[i].gl_Position.xy / gl_in[i].gl_Position.w;
  // Twice the triangle's area in pixels over each edge's length: the height onto that edge.
  float area = abs((p[1].x - p[0].x) * (p[2].y - p[0].y) - (p[2].x - p[0].x) * (p[1].y - p[0].y));
  float h0 = area / max(length(p[2] - p[1]), 1e-6);
  float h1 = area / max(length(p[2] - p[0]), 1e-6);
  float h2 = area / max(length(p[1] - p[0]), 1e-6);
  const vec3 corner[3] = vec3[3](vec3(1, 0, 0), vec3(0, 1, 0), vec3(0, 0, 1));
  for (int i = 0; i < 3; ++i) {
    vEdgeDistance = corner[i] * vec3(h0, h1, h2);
    gl_Position = gl_in[i].gl_Position;
    EmitVertex();
  }
  EndPrimitive();
}

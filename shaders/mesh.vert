#version 330 core
// Lit surfaces: cloth and obstacles. Per-vertex scalar for the strain heat map; the cloth's
// material coordinates for its printed pattern (render/pattern.h).
layout(location = 0) in vec3 aPosition;
layout(location = 1) in vec3 aNormal;
layout(location = 2) in float aScalar;
layout(location = 3) in vec4 aMaterial;  // render/pattern.h: three coordinates and the round

uniform mat4 uViewProj;
uniform mat4 uModel;       // obstacles: unit shape -> world; cloth: identity
uniform mat3 uNormalMatrix;
uniform mat4 uShadow;      // flattens onto the ground plane (shadow pass), identity otherwise
uniform vec3 uEye;
uniform float uRecede;     // drawn this far [m] behind where it is, along the view ray (same pixels)

// The wireframe pass draws the cloth again with this shader and must land on the same depths.
invariant gl_Position;

out vec3 vWorld;
out vec3 vNormal;
out float vScalar;
out vec3 vMaterial;
flat out int vRound;

void main() {
  vec4 world = uShadow * uModel * vec4(aPosition, 1.0);
  vWorld = world.xyz / world.w;
  vNormal = uNormalMatrix * aNormal;
  vScalar = aScalar;
  vMaterial = aMaterial.xyz;
  vRound = int(aMaterial.w + 0.5);
  gl_Position = uViewProj * vec4(vWorld + uRecede * normalize(vWorld - uEye), 1.0);
}

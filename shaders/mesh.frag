#version 330 core
// Two-sided Lambert + Blinn-Phong with a hemisphere ambient term. The back side gets its own
// colour so folds read clearly. With uHeat set, the colour comes from the per-vertex scalar
// through the colour map (blue -> cyan -> green -> yellow -> red over [0, uHeatMax]).
in vec3 vWorld;
in vec3 vNormal;
in float vScalar;

uniform vec3 uEye;
uniform vec3 uLightDir;     // towards the light, unit
uniform vec3 uFrontColor;
uniform vec3 uBackColor;
uniform bool uHeat;
uniform float uHeatMax;
uniform bool uShadowPass;   // draw a flat translucent shadow
uniform float uAlpha;

out vec4 fragColor;

vec3 heat(float s) {
  float x = clamp(s, 0.0, 1.0);
  vec3 c0 = vec3(0.10, 0.20, 0.85), c1 = vec3(0.05, 0.75, 0.90), c2 = vec3(0.20, 0.80, 0.25),
       c3 = vec3(0.95, 0.85, 0.15), c4 = vec3(0.90, 0.15, 0.10);
  if (x < 0.25) return mix(c0, c1, x / 0.25);
  if (x < 0.50) return mix(c1, c2, (x - 0.25) / 0.25);
  if (x < 0.75) return mix(c2, c3, (x - 0.50) / 0.25);
  return mix(c3, c4, (x - 0.75) / 0.25);
}

void main() {
  if (uShadowPass) {
    fragColor = vec4(0.0, 0.0, 0.0, uAlpha);
    return;
  }
  vec3 n = normalize(vNormal);
  vec3 view = normalize(uEye - vWorld);
  bool back = dot(n, view) < 0.0;
  if (back) n = -n;
  vec3 base = back ? uBackColor : uFrontColor;
  if (uHeat) base = heat(vScalar / max(uHeatMax, 1e-12));
  float diffuse = max(dot(n, uLightDir), 0.0);
  float fill = max(dot(n, normalize(vec3(-uLightDir.x, 0.3, -uLightDir.z))), 0.0);
  float hemi = 0.5 + 0.5 * n.y;
  vec3 h = normalize(uLightDir + view);
  float spec = pow(max(dot(n, h), 0.0), 48.0) * 0.18;
  vec3 color = base * (0.30 + 0.20 * hemi + 0.55 * diffuse + 0.15 * fill) + vec3(spec);
  fragColor = vec4(pow(color, vec3(1.0 / 1.1)), uAlpha);
}

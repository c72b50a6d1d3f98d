#version 330 core
// Two-sided Lambert + Blinn-Phong with a hemisphere ambient term. The back side gets its own
// colour so folds read clearly. With uHeat set, the colour comes from the per-vertex scalar
// through the colour map (blue -> cyan -> green -> yellow -> red over [0, uHeatMax]). With
// uPattern set, the cloth's checks or grid lines darken it, printed in its material coordinates
// (render/pattern.h), over either colour.
in vec3 vWorld;
in vec3 vNormal;
in float vScalar;
in vec3 vMaterial;

uniform vec3 uEye;
uniform vec3 uLightDir;     // towards the light, unit
uniform vec3 uFrontColor;
uniform vec3 uBackColor;
uniform bool uHeat;
uniform float uHeatMax;
uniform bool uShadowPass;   // draw a flat translucent shadow
uniform float uAlpha;
uniform int uPattern;          // 0 none, 1 checks, 2 grid lines (ClothPattern)
uniform int uPatternKind;      // vMaterial is 0: (u, v, 0); 1: a tube's (R cos(u / R), v, R sin(u / R)); 2: rest (x, y, z)
uniform float uPatternSize;    // the cells' side [m]
uniform float uPatternRadius;  // a tube's R [m]

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

// The square wave of period 2 (+1 on [0, 1), -1 on [1, 2)) averaged over a pixel's footprint w
// around x: the change of its integral, the triangle wave 1 - |1 - mod(x, 2)|, across it. Cells
// much smaller than a pixel average to grey instead of flickering.
float filteredSquare(float x, float w) {
  w = max(w, 1e-4);
  float above = 1.0 - abs(1.0 - mod(x + 0.5 * w, 2.0));
  float below = 1.0 - abs(1.0 - mod(x - 0.5 * w, 2.0));
  return (above - below) / w;
}

// Coverage of a line about a pixel wide at each integer x, over a footprint of w; the lines fade
// out where they would be closer than about four pixels.
float gridLine(float x, float w) {
  w = max(w, 1e-6);
  float pixels = abs(x - floor(x + 0.5)) / w;
  return (1.0 - smoothstep(0.5, 1.3, pixels)) * (1.0 - smoothstep(0.12, 0.3, w));
}

// How much of the pattern's dark tone this fragment takes, 0 to 1.
float patternShade() {
  vec3 p = vMaterial, w = fwidth(vMaterial);
  if (uPatternKind == 1) {
    p = vec3(uPatternRadius * atan(vMaterial.z, vMaterial.x), vMaterial.y, 0.0);
    w = vec3(length(w.xz), w.y, 0.0);
  }
  p /= uPatternSize;
  w /= uPatternSize;
  bool solid = uPatternKind == 2;
  if (uPattern == 1) {
    float c = filteredSquare(p.x, w.x) * filteredSquare(p.y, w.y);
    if (solid) c *= filteredSquare(p.z, w.z);
    return 0.5 - 0.5 * c;
  }
  float line = max(gridLine(p.x, w.x), gridLine(p.y, w.y));
  if (solid) line = max(line, gridLine(p.z, w.z));
  return line;
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
  if (uPattern == 1) base *= 1.0 - 0.3 * patternShade();
  if (uPattern == 2) base *= 1.0 - 0.6 * patternShade();
  float diffuse = max(dot(n, uLightDir), 0.0);
  float fill = max(dot(n, normalize(vec3(-uLightDir.x, 0.3, -uLightDir.z))), 0.0);
  float hemi = 0.5 + 0.5 * n.y;
  vec3 h = normalize(uLightDir + view);
  float spec = pow(max(dot(n, h), 0.0), 48.0) * 0.18;
  vec3 color = base * (0.30 + 0.20 * hemi + 0.55 * diffuse + 0.15 * fill) + vec3(spec);
  fragColor = vec4(pow(color, vec3(1.0 / 1.1)), uAlpha);
}

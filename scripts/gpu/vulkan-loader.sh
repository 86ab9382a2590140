# Sourced by the GPU-machine scripts that run the Vulkan backend: that machine has NVIDIA's
# driver but no Vulkan loader, which comes as carried .debs in .gl/ (unpacked here), and its
# ICD file lies outside the loader's search path.
if compgen -G ".gl/*.deb" >/dev/null; then
  for deb in .gl/*.deb; do dpkg -x "$deb" /; done
  ldconfig
fi
NV_ICD=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f "$NV_ICD" ] &&
  ! grep -qs nvidia /usr/share/vulkan/icd.d/*.json /etc/vulkan/icd.d/*.json; then
  export VK_DRIVER_FILES=$NV_ICD
fi

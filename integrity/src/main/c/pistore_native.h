#ifndef PISTORE_NATIVE_H
#define PISTORE_NATIVE_H
#include <stddef.h>
#include <stdint.h>

void pistore_crc64_init_tables(void);
uint64_t pistore_crc64_table(uint64_t crc, const uint8_t *p, size_t len);
uint64_t pistore_crc64_pclmul(uint64_t crc, const uint8_t *p, size_t len);
uint64_t pistore_crc64_vpclmul(uint64_t crc, const uint8_t *p, size_t len);
void pistore_crc16_init_tables(void);
uint64_t pistore_crc16_table(uint64_t crc, const uint8_t *p, size_t len);
uint64_t pistore_crc16_pclmul(uint64_t crc, const uint8_t *p, size_t len);
uint64_t pistore_crc16_vpclmul(uint64_t crc, const uint8_t *p, size_t len);
#endif
